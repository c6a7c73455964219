import { csvRecords, type Payload } from '@sluice/engine';
import { tableRows } from '../relational/pipeline';
import { toJsonValue } from '../relational/rows';
import { csvLine } from './csv';

// A tabular payload as bytes for the sinks that write files or request bodies (HTTP, FTP, S3,
// git): JSON arrays, JSON lines and CSV, streamed batch by batch, with the records counted on
// the way. Values as JSON (dates ISO 8601, bytes base64); a CSV cell is that value's text.

export type Encoded = { chunks: AsyncIterable<Buffer>; rows(): number };

/** A value as a CSV cell: text as it is, other values as their JSON, null as an empty cell. */
export function cellText(v: unknown): string | null {
  const j = toJsonValue(v, (b) => b.toString('base64'));
  return j === null ? null : typeof j === 'string' ? j : JSON.stringify(j);
}

/** Rows, JSON or CSV payloads as JSON records (rows become objects by column name). */
export async function* recordsOf(payload: Payload): AsyncGenerator<unknown[]> {
  if (payload.kind === 'json') {
    yield* payload.batches;
    return;
  }
  const rows = await tableRows(payload);
  const names = rows.columns.map((c) => c.name);
  for await (const batch of rows.batches) {
    yield batch.map((row) =>
      Object.fromEntries(names.map((n, i) => [n, toJsonValue(row[i], (b) => b.toString('base64'))])),
    );
  }
}

/** The records as one JSON array, or one record per line (`lines`). */
export function jsonBytes(payload: Payload, lines: boolean): Encoded {
  let rows = 0;
  async function* chunks() {
    let first = true;
    if (!lines) yield Buffer.from('[');
    for await (const batch of recordsOf(payload)) {
      if (batch.length === 0) continue;
      rows += batch.length;
      const text = batch.map((r) => JSON.stringify(r) ?? 'null').join(lines ? '\n' : ',');
      yield Buffer.from(lines ? `${text}\n` : first ? text : `,${text}`);
      first = false;
    }
    if (!lines) yield Buffer.from(']');
  }
  return { chunks: chunks(), rows: () => rows };
}

/** The rows as CSV, with a header row of the column names unless `header` is false. */
export function csvBytes(payload: Payload, delimiter = ',', header = true): Encoded {
  let rows = 0;
  async function* chunks() {
    const table = await tableRows(payload);
    if (header)
      yield Buffer.from(
        csvLine(
          table.columns.map((c) => c.name),
          delimiter,
        ),
      );
    for await (const batch of table.batches) {
      rows += batch.length;
      yield Buffer.from(batch.map((row) => csvLine(row.map(cellText), delimiter)).join(''));
    }
  }
  return { chunks: chunks(), rows: () => rows };
}

/**
 * A CSV payload's bytes as they came; its records are counted on the way (the header is not
 * one). Bytes go out as soon as the parser has counted past them.
 */
export function csvAsIs(payload: Extract<Payload, { kind: 'csv' }>): Encoded {
  let records = 0;
  async function* chunks() {
    const held: Buffer[] = [];
    async function* tap() {
      for await (const chunk of payload.chunks) {
        const b = Buffer.from(chunk);
        held.push(b);
        yield b;
      }
    }
    for await (const batch of csvRecords(tap(), payload.delimiter)) {
      records += batch.length;
      while (held.length > 0) yield held.shift() as Buffer;
    }
    while (held.length > 0) yield held.shift() as Buffer;
  }
  return { chunks: chunks(), rows: () => Math.max(0, records - (payload.header ? 1 : 0)) };
}
