import { type Payload, rowsOf } from '@sluice/engine';
import { csvLine } from '../payloads/csv';
import { cellText, recordsOf } from '../payloads/encode';
import { jsonLineRecords } from '../payloads/json-lines';
import { ConnectorError } from '../types';

// File formats by extension, and a pipeline payload turned into the bytes of a file.

export type Format = 'csv' | 'json' | 'jsonl' | 'file';

const MIME: Record<string, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  jsonl: 'application/x-ndjson',
  ndjson: 'application/x-ndjson',
  txt: 'text/plain',
  md: 'text/markdown',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  xml: 'application/xml',
  html: 'text/html',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  zip: 'application/zip',
  gz: 'application/gzip',
  parquet: 'application/vnd.apache.parquet',
};

const extOf = (path: string) => /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase() ?? '';

export const mimeOf = (path: string) => MIME[extOf(path)] ?? 'application/octet-stream';

export const basename = (path: string) => path.split('/').pop() ?? path;

export const isTextual = (mime: string) =>
  mime.startsWith('text/') || /[/+](json|xml|yaml|x-ndjson|csv)$/.test(mime);

export function formatOf(requested: 'auto' | Format, path: string): Format {
  if (requested !== 'auto') return requested;
  const ext = extOf(path);
  if (ext === 'csv' || ext === 'tsv') return 'csv';
  if (ext === 'json') return 'json';
  if (ext === 'jsonl' || ext === 'ndjson') return 'jsonl';
  return 'file';
}

export const delimiterOf = (requested: string | undefined, path: string) =>
  requested ?? (extOf(path) === 'tsv' ? '\t' : ',');

/** JSON Lines as records, one per non-empty line. */
export function jsonLines(chunks: AsyncIterable<Uint8Array>, batchSize = 1000): AsyncGenerator<unknown[]> {
  return jsonLineRecords(chunks, { batch: batchSize });
}

export type FileBody = { chunks: AsyncIterable<Buffer>; rows(): number; mimeType: string };

/**
 * The bytes a sink commits for an upstream payload: CSV and files as they came when the
 * target format allows, rows and records re-encoded as CSV, a JSON array or JSON Lines.
 */
export function fileBodyOf(input: Payload, format: Format, delimiter: string): FileBody {
  let rows = 0;
  if (input.kind === 'form')
    throw new ConnectorError('INVALID_STATEMENT', 'a form payload cannot be committed as a file');
  if (input.kind === 'file' || (input.kind === 'csv' && (format === 'csv' || format === 'file'))) {
    const source = input;
    async function* raw() {
      for await (const c of source.chunks) yield Buffer.from(c);
    }
    if (source.kind === 'file') return { chunks: raw(), rows: () => 0, mimeType: source.mimeType };
    return csvCounted(source.chunks, source.header);
  }
  const target: Format = format === 'file' ? 'json' : format;
  async function* encode(): AsyncGenerator<Buffer> {
    if (target === 'csv') {
      const table = await rowsOf(input as Exclude<Payload, { kind: 'file' | 'form' }>);
      yield Buffer.from(
        csvLine(
          table.columns.map((c) => c.name),
          delimiter,
        ),
      );
      for await (const batch of table.batches) {
        rows += batch.length;
        yield Buffer.from(batch.map((r) => csvLine(r.map(cellText), delimiter)).join(''));
      }
      return;
    }
    const lines = target === 'jsonl';
    let first = true;
    if (!lines) yield Buffer.from('[');
    for await (const batch of recordsOf(input)) {
      if (batch.length === 0) continue;
      rows += batch.length;
      const text = batch.map((r) => JSON.stringify(r) ?? 'null').join(lines ? '\n' : ',\n');
      yield Buffer.from(lines ? `${text}\n` : first ? `\n${text}` : `,\n${text}`);
      first = false;
    }
    if (!lines) yield Buffer.from(first ? ']\n' : '\n]\n');
  }
  return {
    chunks: encode(),
    rows: () => rows,
    mimeType:
      target === 'csv' ? 'text/csv' : target === 'jsonl' ? 'application/x-ndjson' : 'application/json',
  };
}

/** CSV bytes passed through as they are, with the data rows counted (the header is not one). */
function csvCounted(chunks: AsyncIterable<Uint8Array>, header: boolean): FileBody {
  let newlines = 0;
  let inQuotes = false;
  let last = -1;
  // Counting record ends outside quotes keeps the bytes untouched and costs one pass.
  async function* pass() {
    for await (const c of chunks) {
      const b = Buffer.from(c);
      for (let i = 0; i < b.length; i++) {
        const ch = b[i];
        if (ch === 0x22) inQuotes = !inQuotes;
        else if (ch === 0x0a && !inQuotes) newlines++;
      }
      if (b.length > 0) last = b[b.length - 1];
      yield b;
    }
  }
  return {
    chunks: pass(),
    rows: () => {
      const records = newlines + (last !== -1 && last !== 0x0a ? 1 : 0);
      return Math.max(0, records - (header ? 1 : 0));
    },
    mimeType: 'text/csv',
  };
}
