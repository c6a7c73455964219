import { describe, expect, it } from 'vitest';
import { responseFields } from '../../../../connectors/src/http/openapi';
import { diffSchemas, publicChange } from './schema-diff';
import { classifyTypeChange, normalizeSchema, normalizeType } from './schema-normalize';

const rel = (columns: { name: string; type: string; nullable?: boolean; primary_key?: boolean }[]) =>
  normalizeSchema({
    schema_type: 'relational',
    type: 'postgres',
    tables: [{ schema: 'public', name: 'orders', columns }],
  });
const diff = (a: ReturnType<typeof rel>, b: ReturnType<typeof rel>) => diffSchemas(a, b).map(publicChange);

describe('normalizeType', () => {
  it('folds case, aliases, lengths and display widths', () => {
    expect(normalizeType('character varying')).toBe('text');
    expect(normalizeType('VARCHAR(255)')).toBe('text');
    expect(normalizeType('text')).toBe('text');
    expect(normalizeType('int4')).toBe('integer');
    expect(normalizeType('INT(11)')).toBe('integer');
    expect(normalizeType('int(10) unsigned')).toBe('integer unsigned');
    expect(normalizeType('numeric(10, 2)')).toBe('decimal(10,2)');
    expect(normalizeType('DECIMAL(6,5)')).toBe('decimal(6,5)');
    expect(normalizeType('timestamp(3) with time zone')).toBe('timestamptz');
    expect(normalizeType('_int4')).toBe('integer[]');
    expect(normalizeType('jsonb')).toBe('json');
    expect(normalizeType('float(53)')).toBe('double');
  });

  it('classifies widening, narrowing and incompatible changes', () => {
    expect(classifyTypeChange('integer', 'bigint')).toBe('type_widened');
    expect(classifyTypeChange('bigint', 'integer')).toBe('type_narrowed');
    expect(classifyTypeChange('real', 'double')).toBe('type_widened');
    expect(classifyTypeChange('decimal(10,2)', 'decimal(12,2)')).toBe('type_widened');
    expect(classifyTypeChange('decimal(12,2)', 'decimal(10,2)')).toBe('type_narrowed');
    expect(classifyTypeChange('integer', 'integer unsigned')).toBe('type_widened');
    expect(classifyTypeChange('integer', 'text')).toBe('type_incompatible');
    expect(classifyTypeChange('text', 'integer')).toBe('type_incompatible');
  });
});

describe('diffSchemas', () => {
  const base = [
    { name: 'id', type: 'integer' },
    { name: 'email', type: 'character varying' },
    { name: 'note', type: 'text' },
  ];

  it('finds nothing in cosmetic differences', () => {
    expect(
      diff(
        rel(base),
        rel([
          { name: 'ID', type: 'INT4' },
          { name: 'email', type: 'TEXT' },
          { name: 'Note', type: 'varchar(40)' },
        ]),
      ),
    ).toEqual([]);
  });

  it('reports removed, added and changed columns with reason codes and default severities', () => {
    const changes = diff(
      rel(base),
      rel([
        { name: 'id', type: 'bigint' },
        { name: 'email', type: 'integer' },
        { name: 'created_at', type: 'timestamp' },
      ]),
    );
    expect(changes).toEqual([
      {
        kind: 'column_added',
        path: 'public.orders.created_at',
        before: null,
        after: 'timestamp',
        severity: 'safe',
        reason_code: 'column_added',
      },
      {
        kind: 'type_changed',
        path: 'public.orders.email',
        before: 'text',
        after: 'integer',
        severity: 'breaking',
        reason_code: 'type_incompatible',
      },
      {
        kind: 'type_changed',
        path: 'public.orders.id',
        before: 'integer',
        after: 'bigint',
        severity: 'safe',
        reason_code: 'type_widened',
      },
      {
        kind: 'column_removed',
        path: 'public.orders.note',
        before: 'text',
        after: null,
        severity: 'warning',
        reason_code: 'column_removed_unreferenced',
      },
    ]);
  });

  it('marks a rename (same type and position) as remove + rename_suspected add', () => {
    const changes = diff(rel(base), rel([base[0], { name: 'mail', type: 'text' }, base[2]]));
    expect(changes.map((c) => `${c.kind}:${c.path}:${c.reason_code}:${c.severity}`)).toEqual([
      'column_removed:public.orders.email:column_removed_unreferenced:warning',
      'column_added:public.orders.mail:rename_suspected:warning',
    ]);
  });

  it('reports nullability, keys and tables', () => {
    const a = normalizeSchema({
      schema_type: 'relational',
      tables: [
        {
          schema: 's',
          name: 't',
          columns: [
            { name: 'id', type: 'int', nullable: false, primary_key: true },
            { name: 'x', type: 'int', nullable: false, primary_key: false },
          ],
        },
        { schema: 's', name: 'gone', columns: [] },
      ],
    });
    const b = normalizeSchema({
      schema_type: 'relational',
      tables: [
        {
          schema: 's',
          name: 't',
          columns: [
            { name: 'id', type: 'int', nullable: false, primary_key: true },
            { name: 'x', type: 'int', nullable: true, primary_key: true },
          ],
        },
        { schema: 's', name: 'new', columns: [] },
      ],
    });
    expect(diffSchemas(a, b).map((c) => `${c.reason_code}:${c.path}:${c.severity}`)).toEqual([
      'table_removed:s.gone:breaking',
      'table_added:s.new:safe',
      'primary_key_changed:s.t:warning',
      'became_nullable:s.t.x:warning',
    ]);
  });

  it('diffs document and file schemas the same way', () => {
    const doc = (fields: { name: string; type: string }[]) =>
      normalizeSchema({ schema_type: 'document', collections: [{ name: 'users', fields }] });
    expect(diffSchemas(doc([{ name: 'a', type: 'string' }]), doc([{ name: 'a', type: 'String' }]))).toEqual(
      [],
    );
    expect(diffSchemas(doc([{ name: 'a', type: 'string' }]), doc([])).map((c) => c.path)).toEqual([
      'users.a',
    ]);
    const file = (fields: { name: string; type: string }[]) =>
      normalizeSchema({ schema_type: 'file', files: [{ name: 'a.csv', fields }] });
    expect(
      diffSchemas(file([{ name: 'x', type: 'VARCHAR' }]), file([{ name: 'x', type: 'BIGINT' }]))[0],
    ).toMatchObject({
      path: 'a.csv.x',
      reason_code: 'type_incompatible',
    });
  });

  it('diffs imported OpenAPI operations', () => {
    const op = (
      extra: Record<string, unknown>[],
      fields: { name: string; type: string }[],
      required = false,
    ) =>
      normalizeSchema({
        schema_type: 'openapi',
        operations: [
          {
            method: 'GET',
            path: '/orders',
            parameters: [{ name: 'after', in: 'query', required }],
            response_fields: fields,
          },
          ...extra,
        ],
      });
    const fields = [
      { name: '200.data', type: 'array' },
      { name: '200.data[].id', type: 'integer' },
      { name: '200.data[].email', type: 'string' },
    ];
    const a = op([{ method: 'DELETE', path: '/orders/{id}', parameters: [] }], fields);
    const b = op([{ method: 'POST', path: '/orders', parameters: [] }], fields.slice(0, 2), true);
    expect(diffSchemas(a, b).map((c) => `${c.reason_code}:${c.path}:${c.severity}`)).toEqual([
      'operation_removed:DELETE /orders/{id}:breaking',
      'response_field_removed:GET /orders#200.data[].email:breaking',
      'request_param_became_required:GET /orders?query:after:breaking',
      'operation_added:POST /orders:safe',
    ]);
  });
});

describe('responseFields', () => {
  it('flattens success response schemas of OpenAPI 3 and Swagger 2', () => {
    const item = {
      type: 'object',
      properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
    };
    expect(
      responseFields({
        '200': {
          content: {
            'application/json': {
              schema: { type: 'object', properties: { data: { type: 'array', items: item } } },
            },
          },
        },
        '404': {
          content: {
            'application/json': { schema: { type: 'object', properties: { error: { type: 'string' } } } },
          },
        },
      }),
    ).toEqual([
      { name: '200.data', type: 'array' },
      { name: '200.data[].id', type: 'integer' },
      { name: '200.data[].tags', type: 'array' },
    ]);
    expect(responseFields({ 200: { schema: { type: 'array', items: item } } })).toEqual([
      { name: '200[].id', type: 'integer' },
      { name: '200[].tags', type: 'array' },
    ]);
  });
});
