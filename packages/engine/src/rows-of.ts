import { StringDecoder } from 'node:string_decoder';
import type { Column, CsvPayload, JsonPayload, Payload, RowsPayload } from './payloads';

// Rows for consumers that need them (SQL sinks, row-oriented writers), without reading the
// whole payload first: JSON columns come from the first batch, CSV is parsed as it streams.

const BATCH = 1000;
const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  !(v instanceof Uint8Array) &&
  !(v instanceof Date);

/** Column type of the values seen, in DuckDB's names. */
function typeOf(values: unknown[]): string {
  const seen = new Set<string>();
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'number') seen.add(Number.isInteger(v) ? 'BIGINT' : 'DOUBLE');
    else if (typeof v === 'bigint') seen.add('BIGINT');
    else if (typeof v === 'boolean') seen.add('BOOLEAN');
    else if (typeof v === 'string') seen.add('VARCHAR');
    else seen.add('JSON');
  }
  if (seen.size === 0) return 'VARCHAR';
  if (seen.size === 1) return [...seen][0];
  if ([...seen].every((t) => t === 'BIGINT' || t === 'DOUBLE')) return 'DOUBLE';
  return 'VARCHAR';
}

async function jsonRows(p: JsonPayload): Promise<RowsPayload> {
  const it = p.batches[Symbol.asyncIterator]();
  let first: unknown[] = [];
  // The first non-empty batch decides the columns.
  for (;;) {
    const r = await it.next();
    if (r.done) return { kind: 'rows', columns: [], batches: (async function* () {})() };
    if (r.value.length > 0) {
      first = r.value;
      break;
    }
  }
  const keyed = first.every(isRecord);
  const names = keyed ? [...new Set(first.flatMap((r) => Object.keys(r as object)))] : ['value'];
  const toRow = keyed
    ? (r: unknown) => (isRecord(r) ? names.map((n) => r[n] ?? null) : names.map(() => null))
    : (r: unknown) => [r ?? null];
  const firstRows = first.map(toRow);
  const columns: Column[] = names.map((name, i) => ({ name, type: typeOf(firstRows.map((r) => r[i])) }));
  async function* batches() {
    try {
      yield firstRows;
      for (;;) {
        const r = await it.next();
        if (r.done) return;
        if (r.value.length > 0) yield r.value.map(toRow);
      }
    } finally {
      await it.return?.();
    }
  }
  return { kind: 'rows', columns, batches: batches() };
}

/**
 * A streaming RFC 4180 parser: quoted fields may hold delimiters, quotes ("") and newlines;
 * CRLF and LF both end a record. An empty unquoted field is null, `""` is the empty string.
 */
export async function* csvRecords(
  chunks: AsyncIterable<Uint8Array | string>,
  delimiter: string,
): AsyncGenerator<(string | null)[][]> {
  const decoder = new StringDecoder('utf8');
  const d = delimiter.length === 1 ? delimiter : ',';
  let out: (string | null)[][] = [];
  let row: (string | null)[] = [];
  let field = '';
  let quoted = false; // the current field started with a quote
  let inQuotes = false;
  let pendingQuote = false; // saw a quote inside quotes: either "" or the closing quote
  let afterCr = false;
  let any = false; // the current record has content
  const endField = () => {
    row.push(quoted || field.length > 0 ? field : null);
    field = '';
    quoted = false;
  };
  const endRecord = () => {
    endField();
    out.push(row);
    row = [];
    any = false;
  };
  const feed = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (afterCr) {
        afterCr = false;
        if (c === '\n') continue;
      }
      if (inQuotes) {
        if (pendingQuote) {
          pendingQuote = false;
          if (c === '"') {
            field += '"';
            continue;
          }
          inQuotes = false; // the quote closed the field; c is read below
        } else if (c === '"') {
          pendingQuote = true;
          continue;
        } else {
          field += c;
          continue;
        }
      }
      if (c === '"' && field.length === 0 && !quoted) {
        quoted = true;
        inQuotes = true;
        any = true;
      } else if (c === d) {
        endField();
        any = true;
      } else if (c === '\n' || c === '\r') {
        if (c === '\r') afterCr = true;
        if (any || row.length > 0 || field.length > 0) endRecord();
      } else {
        field += c;
        any = true;
      }
    }
  };
  for await (const c of chunks) {
    feed(typeof c === 'string' ? c : decoder.write(c as Buffer));
    if (out.length >= BATCH) {
      yield out;
      out = [];
    }
  }
  feed(decoder.end());
  if (pendingQuote) inQuotes = false;
  if (any || row.length > 0 || field.length > 0) endRecord();
  if (out.length > 0) yield out;
}

async function csvRows(p: CsvPayload): Promise<RowsPayload> {
  const it = csvRecords(p.chunks, p.delimiter);
  let first: (string | null)[][] = [];
  for (;;) {
    const r = await it.next();
    if (r.done) break;
    if (r.value.length > 0) {
      first = r.value;
      break;
    }
  }
  let names: string[];
  if (p.header && first.length > 0) {
    const head = first.shift()!;
    const used = new Set<string>();
    names = head.map((h, i) => {
      let n = h && h.length > 0 ? h : `column${i}`;
      while (used.has(n)) n = `${n}_${i}`;
      used.add(n);
      return n;
    });
  } else names = (first[0] ?? []).map((_, i) => `column${i}`);
  const width = names.length;
  const fit = (r: (string | null)[]) =>
    r.length === width
      ? r
      : r.length > width
        ? r.slice(0, width)
        : [...r, ...Array(width - r.length).fill(null)];
  async function* batches() {
    try {
      if (first.length > 0) yield first.map(fit);
      for await (const b of it) yield b.map(fit);
    } finally {
      await it.return(undefined);
    }
  }
  return {
    kind: 'rows',
    columns: names.map((name) => ({ name, type: 'VARCHAR' })),
    batches: batches(),
  };
}

/**
 * Rows of a rows, JSON or CSV payload. JSON objects become columns by the keys of the first
 * non-empty batch (later keys are dropped), other JSON values one `value` column; CSV cells are
 * text (VARCHAR) named by the header, or column0… without one. Files and forms have no rows.
 */
export async function rowsOf(payload: Payload): Promise<RowsPayload> {
  switch (payload.kind) {
    case 'rows':
      return payload;
    case 'json':
      return jsonRows(payload);
    case 'csv':
      return csvRows(payload);
    default:
      throw new TypeError(`a ${payload.kind} payload has no rows; rows, JSON or CSV are needed`);
  }
}
