import type { Column, ConnectorContext, SchemaDocument } from '../types';
import { openS3, type S3Conn, type S3Session } from './client';
import { delimiterOf, detectFormat, mimeTypeOf } from './formats';
import { getObject, listObjects, type ObjectInfo, relativeKey } from './objects';
import { openParquet } from './parquet';
import { csvRecords, jsonRecords, ndjsonRecords } from './records';

// Schema import: the objects below the configured prefix as `files`, each with the fields a
// sample of it shows (CSV header and value shapes, JSON keys, Parquet's own schema). Other
// objects are listed with their media type and no fields. Problems with one object become a
// diagnostic, not a failed import.

const MAX_OBJECTS = 1000;
const MAX_SAMPLED = 100;
const SAMPLE_BYTES = 256 * 1024;
const SAMPLE_ROWS = 200;
const MAX_PARQUET_BYTES = 64 * 1024 * 1024;

type Diagnostic = { name: string; target: string; severity: string; code: string; message: string };

const INT = /^-?\d{1,18}$/;
const NUM = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TS = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/;

/** The narrowest type every sampled value fits, or `text`. */
function typeOfValues(values: unknown[]): string {
  const present = values.filter((v) => v !== null && v !== undefined && v !== '');
  if (present.length === 0) return 'text';
  const all = (test: (v: unknown) => boolean) => present.every(test);
  if (all((v) => typeof v === 'boolean' || (typeof v === 'string' && /^(true|false)$/i.test(v))))
    return 'boolean';
  if (all((v) => (typeof v === 'number' && Number.isInteger(v)) || (typeof v === 'string' && INT.test(v))))
    return 'bigint';
  if (all((v) => typeof v === 'number' || (typeof v === 'string' && NUM.test(v)))) return 'double';
  if (all((v) => typeof v === 'string' && DATE.test(v))) return 'date';
  if (all((v) => typeof v === 'string' && TS.test(v))) return 'timestamp';
  if (all((v) => typeof v === 'object')) return 'json';
  return 'text';
}

async function csvFields(s: S3Session, o: ObjectInfo, ctx: ConnectorContext): Promise<Column[]> {
  const obj = await getObject(s, o.key, ctx.signal, `bytes=0-${SAMPLE_BYTES - 1}`);
  const rows: (string | null)[][] = [];
  try {
    for await (const batch of csvRecords(obj.body, delimiterOf(undefined, o.key, obj.contentType))) {
      rows.push(...batch);
      if (rows.length > SAMPLE_ROWS) break;
    }
  } finally {
    obj.close();
  }
  // A sample cut mid-file may end in half a row.
  if (o.size_bytes > SAMPLE_BYTES) rows.pop();
  const header = rows.shift() ?? [];
  return header.map((h, i) => ({ name: h || `column${i}`, type: typeOfValues(rows.map((r) => r[i])) }));
}

async function jsonFields(
  s: S3Session,
  o: ObjectInfo,
  ndjson: boolean,
  ctx: ConnectorContext,
): Promise<Column[]> {
  const partial = o.size_bytes > SAMPLE_BYTES;
  const obj = await getObject(s, o.key, ctx.signal, `bytes=0-${SAMPLE_BYTES - 1}`);
  const records: unknown[] = [];
  try {
    for await (const batch of (ndjson ? ndjsonRecords : jsonRecords)(obj.body, partial)) {
      records.push(...batch);
      if (records.length >= SAMPLE_ROWS) break;
    }
  } finally {
    obj.close();
  }
  const objects = records.filter(
    (r): r is Record<string, unknown> => !!r && typeof r === 'object' && !Array.isArray(r),
  );
  if (objects.length === 0) return records.length > 0 ? [{ name: 'value', type: typeOfValues(records) }] : [];
  const names: string[] = [];
  for (const r of objects) for (const k of Object.keys(r)) if (!names.includes(k)) names.push(k);
  return names.map((n) => ({ name: n, type: typeOfValues(objects.map((r) => r[n])) }));
}

async function parquetFields(s: S3Session, o: ObjectInfo, ctx: ConnectorContext): Promise<Column[]> {
  const obj = await getObject(s, o.key, ctx.signal);
  try {
    const pq = await openParquet(obj.body, { maxBytes: MAX_PARQUET_BYTES, limit: 0 });
    await pq.close();
    return pq.columns;
  } finally {
    obj.close();
  }
}

export async function importS3Schema(conn: S3Conn, ctx: ConnectorContext): Promise<SchemaDocument> {
  const s = await openS3(conn, ctx);
  try {
    const { objects, more } = await listObjects(s, undefined, MAX_OBJECTS, ctx.signal);
    const files: Extract<SchemaDocument, { schema_type: 'file' }>['files'] = [];
    const diagnostics: Diagnostic[] = [];
    let sampled = 0;
    for (const o of objects) {
      const name = relativeKey(s, o.key);
      const format = detectFormat(o.key);
      let fields: Column[] = [];
      if (format && format !== 'file') {
        if (sampled >= MAX_SAMPLED) {
          diagnostics.push({
            name,
            target: o.key,
            severity: 'info',
            code: 'NOT_SAMPLED',
            message: `only the first ${MAX_SAMPLED} data files are sampled`,
          });
        } else if (format === 'parquet' && o.size_bytes > MAX_PARQUET_BYTES) {
          diagnostics.push({
            name,
            target: o.key,
            severity: 'warning',
            code: 'TOO_LARGE',
            message: `Parquet files over ${MAX_PARQUET_BYTES} bytes are not sampled`,
          });
        } else {
          sampled++;
          try {
            fields =
              format === 'csv'
                ? await csvFields(s, o, ctx)
                : format === 'parquet'
                  ? await parquetFields(s, o, ctx)
                  : await jsonFields(s, o, format === 'ndjson', ctx);
          } catch (err) {
            const e = s.error(err, 'schema sample');
            diagnostics.push({ name, target: o.key, severity: 'warning', code: e.code, message: e.message });
          }
        }
      }
      files.push({ name, fields, mime_type: mimeTypeOf(o.key), resource_id: o.key });
    }
    if (more)
      diagnostics.push({
        name: '',
        target: s.prefix,
        severity: 'info',
        code: 'TRUNCATED',
        message: `only the first ${MAX_OBJECTS} objects are listed`,
      });
    return { schema_type: 'file', type: 's3', files, ...(diagnostics.length > 0 ? { diagnostics } : {}) };
  } finally {
    s.close();
  }
}
