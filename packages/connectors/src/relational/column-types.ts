import type { Dialect } from './placeholders';

// The column types a created table gets. A payload column's type is whatever its source said
// (a PostgreSQL or MySQL type name, or one inferred from JSON); it is mapped to a family,
// and the family to the target's type. Unknown types become text: nothing is lost.

export type TypeFamily =
  | 'boolean'
  | 'integer'
  | 'bigint'
  | 'double'
  | 'numeric'
  | 'text'
  | 'json'
  | 'date'
  | 'timestamp'
  | 'timestamptz'
  | 'time'
  | 'bytes'
  | 'uuid';

export function familyOf(type: string): TypeFamily {
  const t = type.toLowerCase().trim();
  if (t.endsWith('[]')) return 'json';
  const base = t
    .replace(/\(.*\)/, '')
    .replace(/\s+unsigned$/, '')
    .trim();
  switch (base) {
    case 'boolean':
    case 'bool':
      return 'boolean';
    case 'smallint':
    case 'int2':
    case 'integer':
    case 'int':
    case 'int4':
    case 'tinyint':
    case 'mediumint':
    case 'year':
      return 'integer';
    case 'bigint':
    case 'int8':
      return 'bigint';
    case 'real':
    case 'float4':
    case 'float':
    case 'double':
    case 'double precision':
    case 'float8':
      return 'double';
    case 'numeric':
    case 'decimal':
      return 'numeric';
    case 'json':
    case 'jsonb':
      return 'json';
    case 'date':
      return 'date';
    case 'timestamp':
    case 'timestamp without time zone':
    case 'datetime':
      return 'timestamp';
    case 'timestamptz':
    case 'timestamp with time zone':
      return 'timestamptz';
    case 'time':
    case 'time without time zone':
      return 'time';
    case 'bytea':
    case 'blob':
    case 'tinyblob':
    case 'mediumblob':
    case 'longblob':
    case 'binary':
    case 'varbinary':
      return 'bytes';
    case 'uuid':
      return 'uuid';
    default:
      return 'text';
  }
}

const PG: Record<TypeFamily, string> = {
  boolean: 'boolean',
  integer: 'integer',
  bigint: 'bigint',
  double: 'double precision',
  numeric: 'numeric',
  text: 'text',
  json: 'jsonb',
  date: 'date',
  timestamp: 'timestamp',
  timestamptz: 'timestamptz',
  time: 'time',
  bytes: 'bytea',
  uuid: 'uuid',
};

const MYSQL: Record<TypeFamily, string> = {
  boolean: 'BOOLEAN',
  integer: 'INT',
  bigint: 'BIGINT',
  double: 'DOUBLE',
  numeric: 'DECIMAL(65,30)',
  text: 'LONGTEXT',
  json: 'JSON',
  date: 'DATE',
  timestamp: 'DATETIME(6)',
  timestamptz: 'DATETIME(6)',
  time: 'TIME(6)',
  bytes: 'LONGBLOB',
  uuid: 'CHAR(36)',
};

/** The column type of a created table; MySQL key columns need a bounded type. */
export function targetType(type: string, dialect: Dialect, isKey = false): string {
  const family = familyOf(type);
  if (dialect === 'postgres') return PG[family];
  if (isKey && (family === 'text' || family === 'json')) return 'VARCHAR(255)';
  if (isKey && family === 'bytes') return 'VARBINARY(255)';
  return MYSQL[family];
}
