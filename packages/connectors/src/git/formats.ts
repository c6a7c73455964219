import type { Payload } from '@sluice/engine';
import { csvAsIs, csvBytes, recordsOf } from '../payloads/encode';
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
  if (input.kind === 'form')
    throw new ConnectorError('INVALID_STATEMENT', 'a form payload cannot be committed as a file');
  if (input.kind === 'file') {
    const file = input;
    async function* raw() {
      for await (const c of file.chunks) yield Buffer.from(c);
    }
    return { chunks: raw(), rows: () => 0, mimeType: file.mimeType };
  }
  if (input.kind === 'csv' && (format === 'csv' || format === 'file'))
    return { ...csvAsIs(input), mimeType: 'text/csv' };
  const target: Format = format === 'file' ? 'json' : format;
  if (target === 'csv') return { ...csvBytes(input, delimiter), mimeType: 'text/csv' };
  // JSON is laid out one record per line, so a commit's diff shows the records that changed.
  const lines = target === 'jsonl';
  let rows = 0;
  async function* encode(): AsyncGenerator<Buffer> {
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
    mimeType: lines ? 'application/x-ndjson' : 'application/json',
  };
}
