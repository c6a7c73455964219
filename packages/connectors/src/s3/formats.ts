import type { S3Format } from './config';

// What an object holds, by its key's extension first (S3 stores often say
// application/octet-stream for everything) and then by its Content-Type.

export type Concrete = Exclude<S3Format, 'auto'>;

const BY_EXTENSION: Record<string, Concrete> = {
  csv: 'csv',
  tsv: 'csv',
  txt: 'file',
  json: 'json',
  ndjson: 'ndjson',
  jsonl: 'ndjson',
  parquet: 'parquet',
  pq: 'parquet',
};

const MIME: Record<string, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/x-ndjson',
  parquet: 'application/vnd.apache.parquet',
  pq: 'application/vnd.apache.parquet',
  txt: 'text/plain',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  xml: 'application/xml',
  zip: 'application/zip',
  gz: 'application/gzip',
  html: 'text/html',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export const extensionOf = (key: string) => {
  const base = key.split('/').pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
};

export const filenameOf = (key: string) => key.split('/').pop() || key;

export const mediaType = (contentType: string | undefined) =>
  (contentType ?? '').split(';')[0].trim().toLowerCase();

/** The format of an object; `null` when neither its key nor its media type says. */
export function detectFormat(key: string, contentType?: string): Concrete | null {
  const byExt = BY_EXTENSION[extensionOf(key)];
  if (byExt) return byExt;
  const t = mediaType(contentType);
  if (t === 'text/csv' || t === 'application/csv' || t === 'text/tab-separated-values') return 'csv';
  if (t === 'application/json' || t.endsWith('+json')) return 'json';
  if (t === 'application/x-ndjson' || t === 'application/jsonl' || t === 'application/json-lines')
    return 'ndjson';
  if (t === 'application/vnd.apache.parquet' || t === 'application/x-parquet') return 'parquet';
  return null;
}

export function resolveFormat(format: S3Format, key: string, contentType?: string): Concrete {
  return format === 'auto' ? (detectFormat(key, contentType) ?? 'file') : format;
}

/** A media type for a key without one (by extension), or the stored one. */
export function mimeTypeOf(key: string, contentType?: string): string {
  const t = mediaType(contentType);
  if (t && t !== 'binary/octet-stream' && !(t === 'application/octet-stream' && MIME[extensionOf(key)]))
    return t;
  return MIME[extensionOf(key)] ?? 'application/octet-stream';
}

/** The CSV delimiter: explicit, a tab for .tsv / TSV, else a comma. */
export function delimiterOf(explicit: string | undefined, key: string, contentType?: string): string {
  if (explicit) return explicit;
  if (extensionOf(key) === 'tsv' || mediaType(contentType) === 'text/tab-separated-values') return '\t';
  return ',';
}

export const contentTypeFor = (format: Concrete, delimiter = ','): string =>
  format === 'csv'
    ? delimiter === '\t'
      ? 'text/tab-separated-values'
      : 'text/csv'
    : format === 'json'
      ? 'application/json'
      : format === 'ndjson'
        ? 'application/x-ndjson'
        : format === 'parquet'
          ? 'application/vnd.apache.parquet'
          : 'application/octet-stream';
