import type { Column, ConnectorLimits, QueryResult } from '../types';

// A query result is stored, so it is bounded twice: by rows and by serialized bytes. Rows
// arrive one at a time from a cursor or stream; the collector says when to stop reading, so
// a million-row answer costs the rows we keep plus one, never the whole set.

/** A driver value as JSON: dates as ISO text, 64-bit and exact numbers as strings. */
export function toJsonValue(value: unknown, binary: (b: Buffer) => string): unknown {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'string':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return String(value);
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value)) return binary(value);
  if (Array.isArray(value)) return value.map((v) => toJsonValue(v, binary));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = toJsonValue(v, binary);
  return out;
}

export class RowCollector {
  readonly rows: unknown[][] = [];
  truncated = false;
  private bytes = 2; // "[]"

  constructor(
    private readonly limits: Pick<ConnectorLimits, 'maxRows' | 'maxResultBytes'>,
    private readonly binary: (b: Buffer) => string,
  ) {}

  /** Keeps the row if it fits; false means "stop reading, the result is truncated". */
  add(raw: unknown[]): boolean {
    if (this.truncated) return false;
    if (this.rows.length >= this.limits.maxRows) {
      this.truncated = true;
      return false;
    }
    const row = raw.map((v) => toJsonValue(v, this.binary));
    const size = Buffer.byteLength(JSON.stringify(row)) + 1;
    if (this.bytes + size > this.limits.maxResultBytes) {
      this.truncated = true;
      return false;
    }
    this.bytes += size;
    this.rows.push(row);
    return true;
  }
}

export type SqlPayload = {
  columns: Column[];
  rows: unknown[][];
  command: string | null;
  affected_rows: number | null;
};

export function sqlResult(payload: SqlPayload, truncated: boolean): QueryResult {
  return { result_type: 'sql', payload, row_count: payload.rows.length, truncated };
}
