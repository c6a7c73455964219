import type { DuckDBAppender, DuckDBValueConverter, JS } from '@duckdb/node-api';

// Between JS values and DuckDB: column types of payloads in DuckDB terms, cells appended with
// DuckDB casting them to the column type, results turned into values any sink can write.

type Duck = typeof import('@duckdb/node-api');

export const bigintsAsText = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

/** A DuckDB column type for a payload column type (PostgreSQL, MySQL or DuckDB spelling). */
export function duckType(type: string): string {
  const t = type
    .toLowerCase()
    .replace(/\bunsigned\b|\bzerofill\b/g, '')
    .trim();
  const base = t.replace(/\(.*\)/, '').trim();
  const args = /\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)/.exec(t);
  if (t.endsWith('[]') || /^(struct|map|union|array|list)\b/.test(base)) return 'JSON';
  if (['bool', 'boolean', 'bit'].includes(base))
    return base === 'bit' && args?.[1] !== '1' ? 'VARCHAR' : 'BOOLEAN';
  if (
    [
      'tinyint',
      'int1',
      'smallint',
      'int2',
      'smallserial',
      'mediumint',
      'int',
      'integer',
      'int4',
      'serial',
      'year',
    ].includes(base)
  )
    return base === 'tinyint' && args?.[1] === '1' ? 'BOOLEAN' : 'INTEGER';
  if (['bigint', 'int8', 'bigserial', 'long', 'ubigint', 'uinteger'].includes(base)) return 'BIGINT';
  if (['hugeint', 'uhugeint', 'bignum'].includes(base)) return 'HUGEINT';
  if (['real', 'float', 'float4', 'float8', 'double', 'double precision', 'number'].includes(base))
    return 'DOUBLE';
  if (['numeric', 'decimal'].includes(base)) {
    const p = Number(args?.[1]);
    const s = Number(args?.[2] ?? 0);
    return args && p >= 1 && p <= 38 && s <= p ? `DECIMAL(${p},${s})` : 'DOUBLE';
  }
  if (base === 'date') return 'DATE';
  if (/^time( without time zone)?$/.test(base)) return 'TIME';
  if (/^(timestamptz|timestamp with time zone)$/.test(base)) return 'TIMESTAMPTZ';
  if (/^(timestamp|datetime)( without time zone)?$/.test(base)) return 'TIMESTAMP';
  if (['json', 'jsonb'].includes(base)) return 'JSON';
  if (['bytea', 'blob', 'binary', 'varbinary', 'tinyblob', 'mediumblob', 'longblob'].includes(base))
    return 'BLOB';
  if (base === 'uuid') return 'UUID';
  return 'VARCHAR';
}

const INT32 = 2 ** 31 - 1;

export function appendCell(d: Duck, ap: DuckDBAppender, v: unknown): void {
  if (v === null || v === undefined) ap.appendNull();
  else if (typeof v === 'boolean') ap.appendBoolean(v);
  else if (typeof v === 'number') {
    if (Number.isInteger(v) && Math.abs(v) <= INT32) ap.appendInteger(v);
    else if (Number.isSafeInteger(v)) ap.appendBigInt(BigInt(v));
    else ap.appendDouble(v);
  } else if (typeof v === 'bigint') ap.appendHugeInt(v);
  else if (typeof v === 'string') ap.appendVarchar(v);
  else if (v instanceof Date) ap.appendTimestamp(new d.DuckDBTimestampValue(BigInt(v.getTime()) * 1000n));
  else if (v instanceof Uint8Array) ap.appendBlob(v);
  else ap.appendVarchar(JSON.stringify(v, bigintsAsText));
}

const SAFE = 2n ** 53n - 1n;

/**
 * JS values a sink can write: integers as numbers while exact, else text; times as text. A JSON
 * column stays JSON text (its sink writes it as it is), but JSON inside a list, struct or map
 * (DuckDB reads a mixed-type array as JSON[]) is parsed, so the sink encodes the whole value once
 * instead of writing a list of JSON strings.
 */
export function outputConverter(d: Duck): DuckDBValueConverter<unknown> {
  const T = d.DuckDBTypeId;
  type Value = Parameters<DuckDBValueConverter<unknown>>[0];
  type Type = Parameters<DuckDBValueConverter<unknown>>[1];
  const inside: DuckDBValueConverter<unknown> = (value, type) =>
    value !== null && type.typeId === T.VARCHAR && type.alias === 'JSON'
      ? JSON.parse(String(value))
      : convert(value, type, inside);
  const convert = (value: Value, type: Type, c: DuckDBValueConverter<unknown>): unknown => {
    if (value === null) return null;
    switch (type.typeId) {
      case T.BIGINT:
      case T.UBIGINT:
      case T.HUGEINT:
      case T.UHUGEINT:
      case T.BIGNUM: {
        const b = d.JSDuckDBValueConverter(value, type, c as DuckDBValueConverter<JS>) as bigint;
        return b >= -SAFE && b <= SAFE ? Number(b) : b.toString();
      }
      case T.TIME:
      case T.TIME_NS:
      case T.TIME_TZ:
      case T.INTERVAL:
      case T.BIT:
        return String(value);
      default:
        return d.JSDuckDBValueConverter(value, type, c as DuckDBValueConverter<JS>);
    }
  };
  return (value, type) => convert(value, type, inside);
}

/** Template values as DuckDB parameters: scalars as they are, anything else as JSON text. */
export function paramValues(
  params: Record<string, unknown>,
): Record<string, string | number | boolean | bigint | null> {
  const out: Record<string, string | number | boolean | bigint | null> = {};
  for (const [k, v] of Object.entries(params)) {
    out[k] =
      v === undefined || v === null
        ? null
        : typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint'
          ? v
          : JSON.stringify(v, bigintsAsText);
  }
  return out;
}
