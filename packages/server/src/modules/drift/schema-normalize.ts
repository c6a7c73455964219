// Every schema kind the connectors import (relational, document, file, OpenAPI) is flattened
// into one shape before diffing: entities (tables, collections, files, operations) holding
// fields with a normalized type. Types are normalized first so cosmetic differences (case,
// aliases such as varchar/text and int4/integer, display widths, whitespace) are never changes
// (docs/drift-and-contracts.md#how-a-report-is-made).

export type NormalField = {
  /** As imported: reports name the column the way the source spells it. */
  name: string;
  type: string;
  nullable?: boolean;
  primary_key?: boolean;
  position: number;
};

export type NormalEntity = {
  /** `table`, `collection`, `file` or `operation`. */
  kind: 'table' | 'collection' | 'file' | 'operation';
  /** Path prefix of the entity: `public.orders`, `orders`, `GET /orders`. */
  name: string;
  fields: NormalField[];
  /** OpenAPI operations: parameters (`in:name` → required). */
  params?: Record<string, boolean>;
};

export type NormalSchema = { schema_type: string; entities: NormalEntity[] };

/** The family and rank of a normalized type; widening stays within a family and raises the rank. */
type TypeInfo = { family: string; rank: number; precision?: number; scale?: number };

const INTEGER_ALIASES: Record<string, string> = {
  int1: 'tinyint',
  tinyint: 'tinyint',
  int2: 'smallint',
  smallint: 'smallint',
  smallserial: 'smallint',
  int2vector: 'smallint',
  mediumint: 'integer',
  int: 'integer',
  int4: 'integer',
  integer: 'integer',
  serial: 'integer',
  int8: 'bigint',
  bigint: 'bigint',
  bigserial: 'bigint',
  long: 'bigint',
  int64: 'bigint',
  hugeint: 'hugeint',
  int128: 'hugeint',
};
const INTEGER_RANK = ['tinyint', 'smallint', 'integer', 'bigint', 'hugeint'];

const SIMPLE_ALIASES: Record<string, string> = {
  // Strings: lengths are ignored (dbt does the same); varchar ↔ text is never a change.
  text: 'text',
  varchar: 'text',
  'character varying': 'text',
  character: 'text',
  char: 'text',
  bpchar: 'text',
  nvarchar: 'text',
  nchar: 'text',
  string: 'text',
  tinytext: 'text',
  mediumtext: 'text',
  longtext: 'text',
  citext: 'text',
  name: 'text',
  float4: 'real',
  real: 'real',
  float: 'double',
  float8: 'double',
  double: 'double',
  'double precision': 'double',
  float64: 'double',
  number: 'double',
  bool: 'boolean',
  boolean: 'boolean',
  numeric: 'decimal',
  decimal: 'decimal',
  bignumeric: 'decimal',
  json: 'json',
  jsonb: 'json',
  object: 'json',
  variant: 'json',
  bytea: 'binary',
  blob: 'binary',
  tinyblob: 'binary',
  mediumblob: 'binary',
  longblob: 'binary',
  binary: 'binary',
  varbinary: 'binary',
  bytes: 'binary',
  date: 'date',
  datetime: 'timestamp',
  timestamp: 'timestamp',
  'timestamp without time zone': 'timestamp',
  timestamp_ntz: 'timestamp',
  timestamptz: 'timestamptz',
  'timestamp with time zone': 'timestamptz',
  timestamp_tz: 'timestamptz',
  timestamp_ltz: 'timestamptz',
  time: 'time',
  'time without time zone': 'time',
  timetz: 'timetz',
  'time with time zone': 'timetz',
  uuid: 'uuid',
  uniqueidentifier: 'uuid',
};

/** `character varying(20)` → `text`, `INT4` → `integer`, `int(11) unsigned` → `integer unsigned`, `numeric(10,2)` → `decimal(10,2)`. */
export function normalizeType(raw: string): string {
  let t = String(raw ?? '')
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ');
  if (t === '') return 'unknown';
  let array = '';
  while (t.endsWith('[]')) {
    array += '[]';
    t = t.slice(0, -2).trim();
  }
  if (t.startsWith('_')) {
    // PostgreSQL's internal array names (`_int4`).
    array += '[]';
    t = t.slice(1);
  }
  const unsigned = /\bunsigned\b/.test(t);
  t = t.replace(/\b(unsigned|signed|zerofill)\b/g, '').trim();
  const m = /^([a-z_ ]+?)\s*\(\s*([0-9]+)\s*(?:,\s*([0-9]+)\s*)?\)\s*([a-z_ ]*)$/.exec(t);
  if (!m && !/^[a-z0-9_ ]+$/.test(t)) return `${t}${array}`;
  // `timestamp(3) with time zone`: the suffix belongs to the base name.
  const base = m ? [m[1].trim(), m[4].trim()].filter(Boolean).join(' ') : t;
  const [p, s] = m ? [m[2], m[3]] : [undefined, undefined];
  const integer = INTEGER_ALIASES[base];
  if (integer) return `${integer}${unsigned ? ' unsigned' : ''}${array}`;
  const simple = SIMPLE_ALIASES[base];
  if (simple === 'decimal') return `decimal(${p ?? 38},${s ?? 0})${array}`;
  // MySQL `float(p)`: 24 or less is single precision.
  if (base === 'float' && p !== undefined) return `${Number(p) <= 24 ? 'real' : 'double'}${array}`;
  if (simple) return `${simple}${array}`;
  return `${base}${array}`;
}

export function typeInfo(normalized: string): TypeInfo {
  if (normalized.endsWith('[]')) return { family: normalized, rank: 0 };
  const unsigned = normalized.endsWith(' unsigned');
  const base = unsigned ? normalized.slice(0, -' unsigned'.length) : normalized;
  const int = INTEGER_RANK.indexOf(base);
  // An unsigned integer fits the next signed size up.
  if (int >= 0) return { family: 'integer', rank: int * 2 + (unsigned ? 1 : 0) };
  if (base === 'real') return { family: 'float', rank: 0 };
  if (base === 'double') return { family: 'float', rank: 1 };
  const dec = /^decimal\((\d+),(\d+)\)$/.exec(base);
  if (dec) return { family: 'decimal', rank: 0, precision: Number(dec[1]), scale: Number(dec[2]) };
  if (base === 'timestamp' || base === 'timestamptz') return { family: base, rank: 0 };
  return { family: base, rank: 0 };
}

export type TypeChange = 'same' | 'type_widened' | 'type_narrowed' | 'type_incompatible';

/** How a normalized type change affects readers: a reader of the old type still reads a wider one. */
export function classifyTypeChange(before: string, after: string): TypeChange {
  if (before === after) return 'same';
  const a = typeInfo(before);
  const b = typeInfo(after);
  // Integers widen into decimals and doubles without losing values they held.
  if (a.family === 'integer' && (b.family === 'decimal' || b.family === 'float')) return 'type_widened';
  if (a.family === 'float' && b.family === 'integer') return 'type_narrowed';
  if (a.family !== b.family) return 'type_incompatible';
  if (a.family === 'decimal') {
    const intA = (a.precision ?? 0) - (a.scale ?? 0);
    const intB = (b.precision ?? 0) - (b.scale ?? 0);
    if (intB >= intA && (b.scale ?? 0) >= (a.scale ?? 0)) return 'type_widened';
    if (intB <= intA && (b.scale ?? 0) <= (a.scale ?? 0)) return 'type_narrowed';
    return 'type_incompatible';
  }
  if (b.rank > a.rank) return 'type_widened';
  if (b.rank < a.rank) return 'type_narrowed';
  return 'type_incompatible';
}

/** Written without precision or scale (`decimal`, `NUMERIC`): any precision and scale. */
const unparameterizedDecimal = (raw: string, normalized: string) =>
  !raw.includes('(') && typeInfo(normalized).family === 'decimal';

/**
 * Whether a column of type `actual` keeps a promise of type `promised` (a data contract's
 * column), both normalized as drift normalizes them: equal after normalization, or a promise
 * without precision and scale (`decimal`) met by a decimal of any precision and scale.
 */
export function typeSatisfies(promised: string, actual: string): boolean {
  const p = normalizeType(promised);
  const a = normalizeType(actual);
  if (p === a) return true;
  return unparameterizedDecimal(promised, p) && typeInfo(a).family === 'decimal';
}

/**
 * A contract revision's type change, by drift's classification; a decimal that loses its
 * precision and scale (`DECIMAL(10,2)` → `decimal`) promises less, so it widens.
 */
export function classifyPromiseChange(before: string, after: string): TypeChange {
  const b = normalizeType(before);
  const a = normalizeType(after);
  if (b !== a && unparameterizedDecimal(after, a) && typeInfo(b).family === 'decimal') {
    return unparameterizedDecimal(before, b) ? 'same' : 'type_widened';
  }
  return classifyTypeChange(b, a);
}

type RawColumn = { name?: unknown; type?: unknown; nullable?: unknown; primary_key?: unknown };

const fieldsOf = (list: unknown): NormalField[] =>
  (Array.isArray(list) ? (list as RawColumn[]) : [])
    .filter((c) => c && typeof c.name === 'string')
    .map((c, position) => ({
      name: c.name as string,
      type: normalizeType(String(c.type ?? 'unknown')),
      ...(typeof c.nullable === 'boolean' ? { nullable: c.nullable } : {}),
      ...(typeof c.primary_key === 'boolean' ? { primary_key: c.primary_key } : {}),
      position,
    }));

/** An imported schema document (or a candidate schema in the same shapes) in the diffable form. */
export function normalizeSchema(doc: unknown): NormalSchema {
  const d = (doc ?? {}) as Record<string, any>;
  const type = String(d.schema_type ?? 'empty');
  const entities: NormalEntity[] = [];
  if (type === 'relational')
    for (const t of d.tables ?? [])
      entities.push({
        kind: 'table',
        name: t.schema ? `${t.schema}.${t.name}` : String(t.name),
        fields: fieldsOf(t.columns),
      });
  else if (type === 'document')
    for (const c of d.collections ?? [])
      entities.push({ kind: 'collection', name: String(c.name), fields: fieldsOf(c.fields) });
  else if (type === 'file')
    for (const f of d.files ?? [])
      entities.push({ kind: 'file', name: String(f.name), fields: fieldsOf(f.fields) });
  else if (type === 'openapi')
    for (const op of d.operations ?? []) {
      const params: Record<string, boolean> = {};
      for (const p of op.parameters ?? []) params[`${p.in}:${p.name}`] = p.required === true;
      entities.push({
        kind: 'operation',
        name: `${String(op.method).toUpperCase()} ${op.path}`,
        fields: fieldsOf(op.response_fields),
        params,
      });
    }
  return { schema_type: type, entities };
}

/** Names compare without regard to case: DuckDB binds identifiers that way, and so does MySQL. */
export const nameKey = (name: string) => name.toLowerCase();
