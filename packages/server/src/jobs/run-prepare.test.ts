import { pipelineSpecSchema } from '@sluice/engine';
import { describe, expect, it } from 'vitest';
import { knownPlanOrders, planAhead, usesOf, WARM_PLANS } from './run-prepare';

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

const rawSpec = (source: string) => ({
  steps: [
    {
      slug: source,
      kind: 'source',
      data_source_ref: 'db',
      operation: { operation_type: 'sql', sql: 'SELECT 1' },
    },
    {
      slug: 'load',
      kind: 'sink',
      data_source_ref: 'db',
      operation: { operation_type: 'sql', write: { table: 't', mode: 'insert' } },
    },
  ],
  edges: [{ from: source, to: 'load' }],
});

describe("a worker's plans made ahead of the first runs", () => {
  it('keeps each plan by pipeline and spec hash, the most recent last, and skips a spec that does not plan', () => {
    const planned = planAhead([
      { pipelineId: 'p-1', specHash: 'h-1', spec: rawSpec('orders') },
      { pipelineId: 'p-2', specHash: 'h-2', spec: { steps: 'not a list' } },
      { pipelineId: 'p-3', specHash: 'h-3', spec: { ...rawSpec('a'), edges: [{ from: 'load', to: 'a' }] } },
      { pipelineId: 'p-4', specHash: 'h-4', spec: rawSpec('users') },
    ]);
    expect(planned).toBe(2);
    const known = Object.entries(knownPlanOrders());
    expect(known.slice(-2)).toEqual([
      ['p-1:h-1', ['orders', 'load']],
      ['p-4:h-4', ['users', 'load']],
    ]);
    expect(known.map(([k]) => k)).not.toContain('p-2:h-2');
    expect(known.map(([k]) => k)).not.toContain('p-3:h-3');
    // Planned again (a second warm start), a spec moves to the end.
    planAhead([{ pipelineId: 'p-1', specHash: 'h-1', spec: rawSpec('orders') }]);
    expect(Object.keys(knownPlanOrders()).slice(-2)).toEqual(['p-4:h-4', 'p-1:h-1']);
  });

  it('plans no more than the worker keeps: the most recent ones', () => {
    const specs = Array.from({ length: WARM_PLANS + 5 }, (_, i) => ({
      pipelineId: `q-${i}`,
      specHash: 'h',
      spec: rawSpec('src'),
    }));
    expect(planAhead(specs)).toBe(WARM_PLANS);
    const keys = Object.keys(knownPlanOrders(WARM_PLANS + 10));
    expect(keys).toHaveLength(WARM_PLANS);
    expect(keys[0]).toBe('q-5:h');
    expect(keys.at(-1)).toBe(`q-${WARM_PLANS + 4}:h`);
  });
});
