import type { Payload, StepContext } from '@sluice/engine';
import { rowsOf } from '@sluice/engine';
import { csvLine } from '../payloads/csv';
import { fileMetadata } from '../payloads/file-metadata';
import { ConnectorError } from '../types';

// Repository files as the hosted forge kinds read and commit them: formats and media types by
// extension, bounded reads, and a pipeline payload turned into the bytes of a file.

const EXT_MIME: Record<string, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/x-ndjson',
  md: 'text/markdown',
  txt: 'text/plain',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  parquet: 'application/vnd.apache.parquet',
};
const extOf = (path: string) => path.split('/').pop()?.split('.').slice(1).pop()?.toLowerCase() ?? '';
export const mimeOf = (path: string) => EXT_MIME[extOf(path)] ?? 'application/octet-stream';

export type Format = 'csv' | 'tsv' | 'json' | 'ndjson' | 'file';
export function formatOf(path: string, given: 'auto' | 'csv' | 'json' | 'file'): Format {
  const ext = extOf(path);
  if (given === 'csv') return ext === 'tsv' ? 'tsv' : 'csv';
  if (given === 'json') return ext === 'ndjson' || ext === 'jsonl' ? 'ndjson' : 'json';
  if (given === 'file') return 'file';
  if (ext === 'csv' || ext === 'tsv') return ext;
  if (ext === 'json') return 'json';
  if (ext === 'ndjson' || ext === 'jsonl') return 'ndjson';
  return 'file';
}

export async function readAll(
  chunks: AsyncIterable<Uint8Array>,
  max: number,
  label: string,
): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const c of chunks) {
    size += c.length;
    if (size > max)
      throw new ConnectorError('RESPONSE_TOO_LARGE', `the ${label} is larger than ${max} bytes`);
    parts.push(Buffer.from(c));
  }
  return Buffer.concat(parts);
}

function cellText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The upstream payload as the bytes of the file to commit. */
export async function encode(
  input: Payload,
  format: Format,
  max: number,
): Promise<{ bytes: Buffer; rows: number | null }> {
  if (input.kind === 'form')
    throw new ConnectorError('INVALID_STATEMENT', 'a form payload cannot be committed as a file');
  if (
    input.kind === 'file' ||
    (input.kind === 'csv' && (format === 'csv' || format === 'tsv' || format === 'file'))
  ) {
    return { bytes: await readAll(input.chunks, max, 'file to commit'), rows: null };
  }
  const rows = await rowsOf(input);
  const names = rows.columns.map((c) => c.name);
  const parts: string[] = [];
  let size = 0;
  let count = 0;
  const push = (s: string) => {
    size += Buffer.byteLength(s);
    if (size > max)
      throw new ConnectorError('RESPONSE_TOO_LARGE', `the file to commit is larger than ${max} bytes`);
    parts.push(s);
  };
  const record = (row: unknown[]) =>
    Object.fromEntries(
      names.map((n, i) => [
        n,
        row[i] instanceof Date
          ? (row[i] as Date).toISOString()
          : typeof row[i] === 'bigint'
            ? String(row[i])
            : row[i],
      ]),
    );
  if (format === 'json') push('[');
  else if (format !== 'ndjson') push(csvLine(names, format === 'tsv' ? '\t' : ','));
  for await (const batch of rows.batches) {
    for (const row of batch) {
      if (format === 'json') push(`${count ? ',' : ''}\n${JSON.stringify(record(row))}`);
      else if (format === 'ndjson') push(`${JSON.stringify(record(row))}\n`);
      else push(csvLine(row.map(cellText), format === 'tsv' ? '\t' : ','));
      count++;
    }
  }
  if (format === 'json') push('\n]\n');
  return { bytes: Buffer.from(parts.join('')), rows: count };
}

export async function* counted(body: AsyncIterable<Uint8Array>, step: StepContext) {
  for await (const c of body) {
    step.count({ bytes_in: c.length });
    yield c instanceof Uint8Array ? c : Buffer.from(c);
  }
}

export async function* lines(body: AsyncIterable<Uint8Array>) {
  let rest = '';
  const decoder = new TextDecoder();
  for await (const c of body) {
    rest += decoder.decode(c, { stream: true });
    const parts = rest.split('\n');
    rest = parts.pop() ?? '';
    yield parts;
  }
  rest += decoder.decode();
  if (rest) yield [rest];
}

/** The `file` object of a saved query's answer for a repository file. */
export const fileMetadataOf = (bytes: Buffer, path: string) =>
  fileMetadata(bytes, mimeOf(path), path.split('/').pop());
