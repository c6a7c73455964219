import type { Step } from '@sluice/engine';
import { type Binder, type Col, openBinder, type SqlRefs, sqlRefs, stubType } from './dry-bind';
import { type NormalEntity, type NormalSchema, nameKey } from './schema-normalize';

// What a source step bound to the changed data source reads, on one side of the change: its
// output columns (null when they cannot be known) and the entities it reads. SQL sources are
// dry-bound in DuckDB over empty copies of the imported tables; the others map their operation
// onto an imported entity (an OpenAPI operation, a collection, a file).

export type SourceView = {
  output: Col[] | null;
  /** Entities (by name key) the step reads. */
  entities: Set<string>;
  /** The step's own column references (SQL sources). */
  refs: SqlRefs | null;
  /** Why the step no longer binds or reaches its entity on this side. */
  error: string | null;
};

/** A binder holding every table of a relational schema, in its own schema, on the search path. */
export async function schemaBinder(schema: NormalSchema): Promise<Binder> {
  const b = await openBinder();
  const schemas: string[] = [];
  for (const e of schema.entities) {
    if (e.kind !== 'table') continue;
    const dot = e.name.indexOf('.');
    const [s, t] = dot > 0 ? [e.name.slice(0, dot), e.name.slice(dot + 1)] : ['main', e.name];
    if (!schemas.includes(s)) schemas.push(s);
    await b.table(
      t,
      e.fields.map((f) => ({ name: f.name, type: stubType(f.type) })),
      s,
    );
  }
  // PostgreSQL resolves unqualified names in public first.
  schemas.sort((x, y) => (x === 'public' ? -1 : y === 'public' ? 1 : 0));
  if (schemas.length > 0) await b.searchPath(schemas.filter((s) => s !== 'main'));
  return b;
}

const JSON_TYPES: Record<string, string> = {
  integer: 'BIGINT',
  number: 'DOUBLE',
  string: 'VARCHAR',
  boolean: 'BOOLEAN',
  object: 'JSON',
  array: 'JSON',
};

const CDC_META: [string, string][] = [
  ['_op', 'text'],
  ['_table', 'text'],
  ['_position', 'text'],
  ['_committed_at', 'timestamp with time zone'],
  ['_unchanged', 'json'],
];

const opOf = (step: Step) => step.operation as Record<string, unknown>;

/** `/orders/{id}` matches `/orders/{{runtime.input.id}}` and `/orders/42`. */
function pathMatches(template: string, path: string): boolean {
  const bare = path.split('?')[0].replace(/\{\{[^}]*\}\}/g, 'x');
  const pattern = template
    .split(/\{[^}]+\}/)
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${pattern}/?$`).test(bare);
}

/** The record columns of an operation: the top-level fields of the items at records_path. */
function recordColumns(e: NormalEntity, recordsPath: string | undefined): Col[] {
  const out: Col[] = [];
  const statuses = new Set(e.fields.map((f) => f.name.split(/[.[]/)[0]));
  for (const status of statuses) {
    const prefixes = recordsPath
      ? [`${status}.${recordsPath}[].`, `${status}.${recordsPath}.`]
      : [`${status}[].`, `${status}.`];
    for (const prefix of prefixes) {
      const cols = e.fields
        .filter((f) => f.name.startsWith(prefix) && !/[.[]/.test(f.name.slice(prefix.length)))
        .map((f) => ({ name: f.name.slice(prefix.length), type: JSON_TYPES[f.type] ?? 'JSON' }));
      if (cols.length > 0) return cols;
    }
    if (out.length > 0) break;
  }
  return out;
}

/** The entity a non-SQL source reads: by collection, path, key or file name. */
function entityOfOperation(schema: NormalSchema, step: Step): NormalEntity | null {
  const op = opOf(step);
  const names = ['collection', 'path', 'key', 'file', 'table', 'name']
    .map((k) => op[k])
    .filter((v): v is string => typeof v === 'string')
    .map(nameKey);
  return (
    schema.entities.find((e) =>
      names.some(
        (n) =>
          n === nameKey(e.name) || n.endsWith(`/${nameKey(e.name)}`) || nameKey(e.name).endsWith(`/${n}`),
      ),
    ) ?? null
  );
}

export async function sourceView(
  schema: NormalSchema,
  binder: Binder | null,
  step: Step,
): Promise<SourceView> {
  const op = opOf(step);
  if (schema.schema_type === 'relational' && op.operation_type === 'sql' && typeof op.sql === 'string') {
    const refs = await sqlRefs(op.sql);
    const tables = new Set((refs?.tables ?? []).map(nameKey));
    const entities = new Set(
      schema.entities
        .filter((e) => tables.has(nameKey(e.name)) || tables.has(nameKey(e.name.split('.').pop() ?? '')))
        .map((e) => nameKey(e.name)),
    );
    const bound = binder ? await binder.describe(op.sql) : null;
    if (!bound) return { output: null, entities, refs, error: null };
    return bound.ok
      ? { output: bound.columns, entities, refs, error: null }
      : { output: null, entities, refs, error: bound.message };
  }
  if (schema.schema_type === 'relational' && op.operation_type === 'cdc' && Array.isArray(op.tables)) {
    // A change row: the metadata columns, then the union of the captured tables' columns, the
    // first table's type for a shared name (docs/cdc.md "The rows").
    const output: Col[] = CDC_META.map(([name, type]) => ({ name, type: stubType(type) }));
    const seen = new Set(output.map((c) => nameKey(c.name)));
    const entities = new Set<string>();
    for (const t of op.tables as string[]) {
      const want = nameKey(t);
      const e = schema.entities.find(
        (x) => nameKey(x.name) === want || (!want.includes('.') && nameKey(x.name).endsWith(`.${want}`)),
      );
      if (!e) continue;
      entities.add(nameKey(e.name));
      for (const f of e.fields)
        if (!seen.has(nameKey(f.name))) {
          seen.add(nameKey(f.name));
          output.push({ name: f.name, type: stubType(f.type) });
        }
    }
    return { output: entities.size > 0 ? output : null, entities, refs: null, error: null };
  }
  if (schema.schema_type === 'openapi' && op.operation_type === 'http') {
    const method = String(op.method ?? 'GET').toUpperCase();
    const path = String(op.path ?? '');
    const e = schema.entities.find((x) => {
      const [m, ...rest] = x.name.split(' ');
      return m === method && pathMatches(rest.join(' '), path);
    });
    if (!e)
      return {
        output: null,
        entities: new Set(),
        refs: null,
        error: `the API has no operation ${method} ${path.split('?')[0]}`,
      };
    const recordsPath = (step.response as { records_path?: string } | undefined)?.records_path;
    const cols = recordColumns(e, recordsPath);
    return {
      output: cols.length > 0 ? cols : null,
      entities: new Set([nameKey(e.name)]),
      refs: null,
      error: null,
    };
  }
  const e = entityOfOperation(schema, step);
  if (!e) return { output: null, entities: new Set(), refs: null, error: null };
  return {
    output: e.fields.map((f) => ({ name: f.name, type: stubType(f.type) })),
    entities: new Set([nameKey(e.name)]),
    refs: null,
    error: null,
  };
}
