import { createHash } from 'node:crypto';
import { type Resolve, renderString, renderValue, TemplateError } from '@sluice/engine';
import { csvLine } from '../payloads/csv';
import { type ConnectorContext, ConnectorError, type QueryResult } from '../types';
import { openS3, type S3Conn, type S3Session } from './client';
import type { S3Statement } from './config';
import { contentTypeFor, delimiterOf, filenameOf, mimeTypeOf, resolveFormat } from './formats';
import { fullKey, getObject, listObjects, objectExists, putObject, relativeKey } from './objects';
import { openParquet } from './parquet';
import { csvRecords, jsonRecords, ndjsonRecords } from './records';

/** Schema import samples objects (schema.ts); the definition finds it here. */
export { importS3Schema } from './schema';

// Test connection and query execution (list, read, write) of the S3 connector.

/** Lists at most one key: proves the endpoint, the credentials and the bucket in one call. */
export async function testS3(conn: S3Conn, ctx: ConnectorContext): Promise<void> {
  const s = await openS3(conn, ctx);
  try {
    await listObjects(s, undefined, 1, ctx.signal);
  } finally {
    s.close();
  }
}

const PART_SIZE = 8 * 1024 * 1024;

/** `{{name}}` of a saved query: the parameter's value; a missing one is the statement's fault. */
function withParameters<T>(parameters: Record<string, unknown>, work: (resolve: Resolve) => T): T {
  const resolve: Resolve = (name) =>
    Object.hasOwn(parameters, name) ? { found: true, value: parameters[name] } : { found: false };
  try {
    return work(resolve);
  } catch (err) {
    if (err instanceof TemplateError)
      throw new ConnectorError(
        'INVALID_STATEMENT',
        `the statement uses {{${err.template}}}, which was not given`,
      );
    throw err;
  }
}

/** A key or prefix: every placeholder becomes text (a non-string value its JSON). */
const renderText = (text: string, parameters: Record<string, unknown>): string =>
  withParameters(parameters, (resolve) => {
    const v = renderString(text, resolve);
    return typeof v === 'string' ? v : JSON.stringify(v);
  });

/** Content: a string that is exactly one placeholder keeps the value's JSON type. */
const renderContent = <T>(value: T, parameters: Record<string, unknown>): T =>
  withParameters(parameters, (resolve) => renderValue(value, resolve) as T);

type Payload = Record<string, unknown>;

export async function executeS3(
  conn: S3Conn,
  statement: S3Statement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  if (statement.operation === 'write' && ctx.readOnly)
    throw new ConnectorError(
      'PERMISSION_DENIED',
      'the data source is read-only: a write cannot go through it',
    );
  const started = Date.now();
  const s = await openS3(conn, ctx);
  try {
    let out: { payload: Payload; rowCount: number | null; truncated: boolean };
    if (statement.operation === 'list') out = await listOp(s, statement, parameters, ctx);
    else if (statement.operation === 'read') out = await readOp(s, statement, parameters, ctx);
    else out = await writeOp(s, statement, parameters, ctx);
    return {
      result_type: 's3',
      payload: { type: 's3', payload: out.payload, duration_ms: Date.now() - started, success: true },
      row_count: out.rowCount,
      truncated: out.truncated,
    };
  } finally {
    s.close();
  }
}

/** Drops rows from the end until the JSON of `rows` fits the stored-result bound. */
function fit(rows: unknown[], maxBytes: number): { rows: unknown[]; cut: boolean } {
  let size = 2;
  for (let i = 0; i < rows.length; i++) {
    size += Buffer.byteLength(JSON.stringify(rows[i]) ?? 'null') + 1;
    if (size > maxBytes - 4096) return { rows: rows.slice(0, i), cut: true };
  }
  return { rows, cut: false };
}

async function listOp(
  s: S3Session,
  st: S3Statement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
) {
  const prefix = st.prefix === undefined ? undefined : renderText(st.prefix, parameters);
  const { objects, more } = await listObjects(s, prefix, ctx.limits.maxRows, ctx.signal);
  const shown = objects.map((o) => ({ ...o, key: relativeKey(s, o.key) }));
  const { rows, cut } = fit(shown, ctx.limits.maxResultBytes);
  return {
    payload: {
      operation: 'list',
      format: st.format,
      bucket: s.bucket,
      prefix: prefix ?? '',
      objects: rows,
      row_count: rows.length,
    },
    rowCount: rows.length,
    truncated: more || cut,
  };
}

async function readOp(
  s: S3Session,
  st: S3Statement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
) {
  const key = fullKey(s, renderText(st.key as string, parameters));
  const obj = await getObject(s, key, ctx.signal);
  const format = resolveFormat(st.format, key, obj.contentType);
  const max = ctx.limits.maxRows;
  const base = { operation: 'read', format, bucket: s.bucket, key: relativeKey(s, key) };
  try {
    if (format === 'file') {
      const hash = createHash('sha256');
      let size = 0;
      for await (const chunk of obj.body) {
        size += chunk.length;
        hash.update(chunk);
      }
      const file = {
        mime_type: mimeTypeOf(key, obj.contentType),
        size_bytes: size,
        digest_algorithm: 'sha256',
        digest: hash.digest('hex'),
        filename: filenameOf(key),
      };
      return { payload: { ...base, file }, rowCount: null, truncated: false };
    }
    if (format === 'parquet') {
      const pq = await openParquet(obj.body, { maxBytes: ctx.limits.maxResponseBytes, limit: max + 1 });
      const rows: unknown[][] = [];
      for await (const batch of pq.batches) rows.push(...batch);
      const more = rows.length > max;
      const { rows: kept, cut } = fit(rows.slice(0, max), ctx.limits.maxResultBytes);
      return {
        payload: {
          ...base,
          column_names: pq.columns.map((c) => c.name),
          columns: pq.columns,
          rows: kept,
          row_count: kept.length,
        },
        rowCount: kept.length,
        truncated: more || cut,
      };
    }
    if (format === 'csv') {
      const delimiter = delimiterOf(st.delimiter, key, obj.contentType);
      const rows: (string | null)[][] = [];
      let header: (string | null)[] | null = null;
      let more = false;
      outer: for await (const batch of csvRecords(obj.body, delimiter)) {
        for (const r of batch) {
          if (st.has_header && header === null) {
            header = r;
            continue;
          }
          if (rows.length === max) {
            more = true;
            break outer;
          }
          rows.push(r);
        }
      }
      const width = header?.length ?? rows[0]?.length ?? 0;
      const names = header
        ? header.map((h, i) => h || `column${i}`)
        : Array.from({ length: width }, (_, i) => `column${i}`);
      const { rows: kept, cut } = fit(rows, ctx.limits.maxResultBytes);
      return {
        payload: {
          ...base,
          column_names: names,
          is_headless_csv: !st.has_header,
          rows: kept,
          row_count: kept.length,
        },
        rowCount: kept.length,
        truncated: more || cut,
      };
    }
    const records: unknown[] = [];
    let more = false;
    const source = format === 'json' ? jsonRecords(obj.body) : ndjsonRecords(obj.body);
    outer: for await (const batch of source) {
      for (const r of batch) {
        if (records.length === max) {
          more = true;
          break outer;
        }
        records.push(r);
      }
    }
    const { rows: kept, cut } = fit(records, ctx.limits.maxResultBytes);
    return {
      payload: { ...base, rows: kept, row_count: kept.length },
      rowCount: kept.length,
      truncated: more || cut,
    };
  } finally {
    obj.close();
  }
}

/** Records (objects) as CSV with a header of every key, in the order they first appear. */
function csvOfRecords(records: unknown[], delimiter: string): string {
  const names: string[] = [];
  for (const r of records) {
    if (!r || typeof r !== 'object' || Array.isArray(r))
      throw new ConnectorError('INVALID_STATEMENT', 'CSV content must be an array of objects or text');
    for (const k of Object.keys(r)) if (!names.includes(k)) names.push(k);
  }
  const cell = (v: unknown) =>
    v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);
  return [
    csvLine(names, delimiter),
    ...records.map((r) =>
      csvLine(
        names.map((n) => cell((r as Payload)[n])),
        delimiter,
      ),
    ),
  ].join('');
}

async function writeOp(
  s: S3Session,
  st: S3Statement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
) {
  const key = fullKey(s, renderText(st.key as string, parameters));
  const content = renderContent(st.content, parameters);
  let format = resolveFormat(st.format, key);
  if (st.format === 'auto' && format === 'file' && typeof content !== 'string') format = 'json';
  const delimiter = delimiterOf(st.delimiter, key);
  let text: string;
  let rows: number | null = null;
  if (typeof content === 'string') text = content;
  else if (format === 'csv') {
    const records = Array.isArray(content) ? content : [content];
    text = csvOfRecords(records, delimiter);
    rows = records.length;
  } else if (format === 'ndjson') {
    const records = Array.isArray(content) ? content : [content];
    text = records.map((r) => `${JSON.stringify(r)}\n`).join('');
    rows = records.length;
  } else {
    text = JSON.stringify(content);
    rows = Array.isArray(content) ? content.length : 1;
  }
  if (!st.overwrite && (await objectExists(s, key, ctx.signal)))
    throw new ConnectorError('QUERY_FAILED', 'the object already exists and overwrite is false');
  const contentType =
    st.content_type ?? (format === 'file' ? mimeTypeOf(key) : contentTypeFor(format, delimiter));
  const body = Buffer.from(text, 'utf8');
  const up = await putObject(
    s,
    key,
    (async function* () {
      yield body;
    })(),
    { contentType, partSizeBytes: PART_SIZE, signal: ctx.signal },
  );
  return {
    payload: {
      operation: 'write',
      format,
      bucket: s.bucket,
      key: relativeKey(s, key),
      target_key: key,
      written_bytes: up.bytes,
      written_rows: rows,
      file: {
        mime_type: contentType,
        size_bytes: up.bytes,
        digest_algorithm: 'sha256',
        digest: up.digest,
        filename: filenameOf(key),
      },
    },
    rowCount: rows,
    truncated: false,
  };
}
