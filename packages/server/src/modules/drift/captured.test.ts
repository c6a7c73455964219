import { describe, expect, it } from 'vitest';
import { withCapturedTables } from './captured';
import { diffSchemas } from './schema-diff';
import { normalizeSchema } from './schema-normalize';

// The captured tables stand in for their imported form (docs/cdc.md "Schema changes").

const imported = {
  schema_type: 'relational',
  type: 'postgres',
  tables: [
    { schema: 'public', name: 'orders', columns: [{ name: 'id', type: 'integer' }] },
    { schema: 'public', name: 'gone', columns: [{ name: 'x', type: 'integer' }] },
    { schema: 'public', name: 'kept', columns: [{ name: 'y', type: 'text' }] },
  ],
};

const changes = (after: Record<string, unknown>) =>
  diffSchemas(normalizeSchema(imported), normalizeSchema(after)).map((c) => `${c.kind} ${c.path}`);

describe('withCapturedTables', () => {
  it('changes nothing when the captured tables are as imported (names compared without case, aliases folded)', () => {
    const same = withCapturedTables(imported, [
      { schema: 'public', name: 'ORDERS', columns: [{ name: 'id', type: 'int4' }] },
    ]);
    expect(changes(same)).toEqual([]);
  });

  it('replaces, drops and adds only the captured tables', () => {
    const after = withCapturedTables(imported, [
      {
        schema: 'public',
        name: 'orders',
        columns: [
          { name: 'id', type: 'bigint' },
          { name: 'vip', type: 'boolean' },
        ],
      },
      { schema: 'public', name: 'gone', columns: null },
      { schema: 'public', name: 'fresh', columns: [{ name: 'z', type: 'date' }] },
    ]);
    expect(changes(after).sort()).toEqual(
      [
        'column_added public.orders.vip',
        'table_added public.fresh',
        'table_removed public.gone',
        'type_changed public.orders.id',
      ].sort(),
    );
    expect(imported.tables).toHaveLength(3);
  });
});
