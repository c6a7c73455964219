import { pipelineSpecSchema } from '@sluice/engine';
import { describe, expect, it } from 'vitest';
import { usesOf } from './run-prepare';

// A run reads (and decrypts) its environment's secrets and variables only when a template of its
// spec can reach them; every form that reaches them must be seen.

const specWith = (sql: string) =>
  pipelineSpecSchema.parse({
    steps: [
      { slug: 'src', kind: 'source', data_source_ref: 'db', operation: { operation_type: 'sql', sql } },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'db',
        operation: { operation_type: 'sql', write: { table: 't', mode: 'insert' } },
      },
    ],
    edges: [{ from: 'src', to: 'load' }],
  });

describe('what a run reads of its environment', () => {
  it('reads neither for a spec without such templates', () => {
    expect(usesOf(specWith('SELECT 1 AS n, {{ runtime.run_slug }} AS r'))).toEqual({
      secrets: false,
      env: false,
    });
  });

  it('sees each form that reaches them', () => {
    expect(usesOf(specWith("SELECT '{{runtime.secrets.TOKEN}}'"))).toEqual({ secrets: true, env: false });
    expect(usesOf(specWith("SELECT '{{ runtime.env.REGION }}'"))).toEqual({ secrets: false, env: true });
    expect(usesOf(specWith("SELECT '{{runtime.secrets}}'"))).toEqual({ secrets: true, env: false });
    expect(usesOf(specWith("SELECT '{{runtime}}'"))).toEqual({ secrets: true, env: true });
    // A name that only starts the same is another name.
    expect(usesOf(specWith("SELECT '{{runtime.environment}}'"))).toEqual({ secrets: false, env: false });
  });
});
