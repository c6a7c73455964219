import { type PipelineSpec, pipelineSpecSchema } from '@sluice/engine';
import { describe, expect, it } from 'vitest';
import type { PipelineTarget } from './impact';
import { computeReport } from './report';

const table = (columns: [string, string][]) => ({
  schema_type: 'relational',
  type: 'postgres',
  tables: [
    { schema: 'public', name: 'orders', columns: columns.map(([name, type]) => ({ name, type })) },
    { schema: 'public', name: 'other', columns: [{ name: 'x', type: 'integer' }] },
  ],
});
const base: [string, string][] = [
  ['id', 'integer'],
  ['email', 'character varying'],
  ['note', 'text'],
];

const spec = (transform: string): PipelineSpec =>
  pipelineSpecSchema.parse({
    steps: [
      {
        slug: 'src',
        kind: 'source',
        data_source_ref: 'shop',
        operation: { operation_type: 'sql', sql: 'SELECT * FROM orders' },
      },
      { slug: 'clean', kind: 'transform', operation: { operation_type: 'sql', sql: transform } },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'wh',
        operation: { operation_type: 'sql', write: { table: 'o' } },
      },
    ],
    edges: [
      { from: 'src', to: 'clean' },
      { from: 'clean', to: 'load' },
    ],
  });
const target = (sql: string, extra: Partial<PipelineTarget> = {}): PipelineTarget => ({
  pipelineSlug: 'orders',
  specHash: 'abcdef1234',
  spec: spec(sql),
  environments: ['production'],
  refs: new Set(['shop']),
  contracts: new Map(),
  runs: [],
  ...extra,
});

describe('computeReport', () => {
  it('names the step and the column when a transform reads a removed column', async () => {
    const r = await computeReport(table(base), table([base[0], base[2]]), [
      target('SELECT id, lower(email) AS email FROM src'),
    ]);
    expect(r.severity).toBe('breaking');
    expect(r.changes).toEqual([
      expect.objectContaining({
        path: 'public.orders.email',
        reason_code: 'column_removed_referenced',
        severity: 'breaking',
      }),
    ]);
    const step = r.impacts.find((i) => i.kind === 'step');
    expect(step).toMatchObject({ step_slug: 'clean', pipeline_slug: 'orders', severity: 'breaking' });
    expect(step?.message).toMatch(/email/);
    expect(r.impacts.find((i) => i.kind === 'edge')).toMatchObject({ edge_slug: 'src->clean' });
    expect(r.impacts.at(-1)).toMatchObject({ kind: 'pipeline', severity: 'breaking' });
  });

  it('warns about a removed column nothing reads and keeps a widening safe', async () => {
    const r = await computeReport(table(base), table([base[0], base[1]]), [
      target('SELECT id, email FROM src'),
    ]);
    expect(r.severity).toBe('warning');
    expect(r.changes[0]).toMatchObject({ reason_code: 'column_removed_unreferenced' });
    const widened = await computeReport(table(base), table([['id', 'bigint'], base[1], base[2]]), [
      target('SELECT * FROM src'),
    ]);
    expect(widened.severity).toBe('safe');
    expect(widened.changes[0]).toMatchObject({ reason_code: 'type_widened' });
    expect(widened.impacts.map((i) => i.kind)).toEqual([
      'edge',
      'edge',
      'sink',
      'unknown_consumer',
      'pipeline',
    ]);
  });

  it('marks an added column that reaches a sink through SELECT * as star_widened', async () => {
    const r = await computeReport(table(base), table([...base, ['vip', 'boolean']]), [
      target('SELECT * FROM src'),
    ]);
    expect(r.changes[0]).toMatchObject({ reason_code: 'star_widened', severity: 'warning' });
    expect(r.impacts.filter((i) => i.kind === 'unknown_consumer')).toHaveLength(1);
    const narrow = await computeReport(table(base), table([...base, ['vip', 'boolean']]), [
      target('SELECT id FROM src'),
    ]);
    expect(narrow.changes[0]).toMatchObject({ reason_code: 'column_added', severity: 'safe' });
    expect(narrow.severity).toBe('safe');
  });

  it('finds nothing in cosmetic differences and reports contract breaks and runs', async () => {
    expect(
      (await computeReport(table(base), table([['ID', 'INT4'], ['Email', 'text'], base[2]]), [])).changes,
    ).toEqual([]);
    const r = await computeReport(table(base), table([base[0], base[1]]), [
      target('SELECT * FROM src', {
        contracts: new Map([
          ['load', { slug: 'orders-out', columns: [{ name: 'note', type: 'text', nullable: true }] }],
        ]),
        runs: [{ slug: 'run-1', state: 'queued', environment: 'production' }],
      }),
    ]);
    expect(r.severity).toBe('breaking');
    expect(r.impacts.find((i) => i.kind === 'sink' && i.severity === 'breaking')?.message).toMatch(
      /note is missing/,
    );
    expect(r.impacts.find((i) => i.kind === 'run')?.message).toMatch(/run-1/);
  });
});
