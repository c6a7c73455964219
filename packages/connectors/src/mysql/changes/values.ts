import type { TableColumn } from './tables';

// A binlog value in the shape the same column has in a snapshot row (mysql2's text protocol
// with dateStrings and bigNumberStrings, docs/connectors/mysql.md): BIGINT as exact text
// (unsigned beyond 2^63 included), DECIMAL as exact text, temporal values as the server's text
// in UTC, binary values as bytes. The binlog drops BINARY(n)'s trailing zero bytes and keeps
// FLOAT's single-precision bits; both are put back as a SELECT shows them.

export function snapshotValue(v: unknown, c: TableColumn): unknown {
  if (v === null || v === undefined) return null;
  switch (c.dataType) {
    case 'bigint':
      return typeof v === 'string' ? v : String(v);
    case 'float':
      return typeof v === 'number' ? Number(v.toPrecision(6)) : v;
    case 'binary':
      if (Buffer.isBuffer(v) && c.octets !== null && v.length < c.octets) {
        return Buffer.concat([v, Buffer.alloc(c.octets - v.length)]);
      }
      return v;
    case 'set':
      return Array.isArray(v) ? v.join(',') : v;
    case 'json':
      return typeof v === 'string' ? v : JSON.stringify(v);
    default:
      return v;
  }
}

const bigintText = (v: unknown) => (typeof v === 'string' ? v : String(v));
const floatValue = (v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(6)) : v);
const setText = (v: unknown) => (Array.isArray(v) ? v.join(',') : v);
const jsonText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The conversion snapshotValue makes for a column's non-null values, chosen once per column;
 * null where the library's value is already the snapshot's shape (kept in step with snapshotValue).
 */
export function valueReader(c: TableColumn): ((v: unknown) => unknown) | null {
  switch (c.dataType) {
    case 'bigint':
      return bigintText;
    case 'float':
      return floatValue;
    case 'binary':
      return c.octets === null ? null : (v) => snapshotValue(v, c);
    case 'set':
      return setText;
    case 'json':
      return jsonText;
    default:
      return null;
  }
}
