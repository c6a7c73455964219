import type { Column } from '@sluice/engine';
import { Binary, Decimal128, EJSON } from 'bson';

// BSON values in and out of JSON (docs/connectors/mongodb.md, "Values"). Out: every value the
// JSON cannot hold becomes text that keeps it exactly (ObjectId as its 24 hex digits, Decimal128
// and 64-bit integers as decimal text, dates as ISO 8601, generic binary as base64, UUIDs as
// UUID text) or, for the rarer types, its canonical Extended JSON object. In: rows are typed by
// their column types (bigint to Long, numeric to Decimal128, timestamps to dates).

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

// By `_bsontype`, not instanceof: the driver's BSON classes (CommonJS) are not the ones an ES
// module import of bson gives, though both serialize alike.
const bsontype = (v: unknown): string | undefined => (v as { _bsontype?: string } | null)?._bsontype;

const canonical = (v: unknown) =>
  (EJSON.serialize({ v } as Record<string, unknown>, { relaxed: false }) as { v: unknown }).v;

/** A driver value as JSON (losslessly: text or canonical Extended JSON). */
export function toJson(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'bigint':
      return v.toString();
    case 'object':
      break;
    default:
      return String(v);
  }
  if (Array.isArray(v)) return v.map(toJson);
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toJson(x);
    return out;
  }
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  const b = v as any;
  switch (bsontype(v)) {
    case 'ObjectId':
      return b.toHexString();
    case 'Decimal128':
    case 'Long':
      return b.toString();
    case 'Int32':
    case 'Double':
      return toJson(b.value);
    case 'Binary':
      if (b.sub_type === Binary.SUBTYPE_UUID && b.position === 16) return b.toUUID().toHexString(true);
      if (b.sub_type === Binary.SUBTYPE_DEFAULT) return Buffer.from(b.value()).toString('base64');
      return canonical(v);
    default:
      break;
  }
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  // Timestamp, regular expressions, code, DBRef, MinKey/MaxKey, symbols.
  return canonical(v);
}

/** The BSON type name of a value, as MongoDB's $type names them. */
export function bsonType(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) && Math.abs(v) < 2 ** 31 ? 'int' : 'double';
    case 'bigint':
      return 'long';
    default:
      break;
  }
  if (Array.isArray(v)) return 'array';
  if (isPlainObject(v)) return 'object';
  if (v instanceof Date) return 'date';
  if (v instanceof RegExp) return 'regex';
  switch (bsontype(v)) {
    case 'ObjectId':
      return 'objectId';
    case 'Int32':
      return 'int';
    case 'Double':
      return 'double';
    case 'Long':
      return 'long';
    case 'Decimal128':
      return 'decimal';
    case 'Binary':
      return 'binData';
    case 'Timestamp':
      return 'timestamp';
    case 'BSONRegExp':
      return 'regex';
    case 'Code':
      return 'javascript';
    case 'MinKey':
      return 'minKey';
    case 'MaxKey':
      return 'maxKey';
    case 'DBRef':
      return 'dbPointer';
    case 'BSONSymbol':
      return 'symbol';
    default:
      return v instanceof Uint8Array ? 'binData' : 'object';
  }
}

// ---- into BSON -------------------------------------------------------------------------------

/** A timestamp as PostgreSQL, MySQL or DuckDB print it, or ISO 8601; no zone means UTC. */
function parseTimestamp(text: string): Date | null {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i.exec(
    text.trim(),
  );
  if (!m) return null;
  let zone = m[3] ?? 'Z';
  if (/^[+-]\d{2}$/.test(zone)) zone = `${zone}:00`;
  else if (/^[+-]\d{4}$/.test(zone)) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const d = new Date(`${m[1]}T${m[2]}${zone}`);
  return Number.isNaN(d.getTime()) ? null : d;
}

type Convert = (v: unknown) => unknown;

const keep: Convert = (v) => v;

/** How a column of this type is written: by the type names PostgreSQL, MySQL and DuckDB use. */
export function converterFor(type: string): Convert {
  const t = type.toLowerCase();
  if (/^(bigint|int8|int64|long|hugeint|ubigint)\b/.test(t))
    return (v) => {
      if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
      return v;
    };
  if (/^(numeric|decimal)\b/.test(t))
    return (v) => {
      if (typeof v === 'string' || typeof v === 'number') {
        try {
          return Decimal128.fromString(String(v));
        } catch {
          return v;
        }
      }
      return v;
    };
  if (/^(integer|int|int2|int4|smallint|tinyint|mediumint|int32|int16|utinyint|usmallint|uinteger)\b/.test(t))
    return (v) => (typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v);
  if (/^(double|float|real)\b/.test(t))
    return (v) => (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : v);
  if (/^(bool|boolean)\b/.test(t))
    return (v) =>
      v === 't' || v === 'true' || v === 1 ? true : v === 'f' || v === 'false' || v === 0 ? false : v;
  if (/^(timestamp|datetime)/.test(t)) return (v) => (typeof v === 'string' ? (parseTimestamp(v) ?? v) : v);
  if (/^(json|jsonb)$/.test(t))
    return (v) => {
      if (typeof v !== 'string') return v;
      try {
        return JSON.parse(v);
      } catch {
        return v;
      }
    };
  return keep;
}

/** Converters of a rows payload's columns. */
export function convertersOf(columns: Column[]): Convert[] {
  return columns.map((c) => converterFor(c.type));
}
