import type { Payload, SourceOutput, StepContext } from '@sluice/engine';
import { dottedPath, JsonRecordScanner, JsonScanError, scanRecords } from '../payloads/json-records';
import { JsonArraySlicer } from '../payloads/json-slice';
import { deferred, tracked } from '../payloads/streams';
import { type ConnectorContext, ConnectorError } from '../types';
import { forwardsInput, type HttpConn, httpOperationOf, remoteError, renderHttp, signalOf } from './render';
import { encodeBody, mediaType } from './request';
import { openHttp } from './transport';

// A pipeline source over HTTP (service-api.md HTTP rules 5-7): one request per run, never a
// walk over pages. The response streams into the payload its media type (or
// `response.format`) calls for: JSON records, CSV bytes or a raw file.

const JSON_BATCH = 1000;

type Format = 'json' | 'csv' | 'file';

function formatOf(format: 'auto' | Format, type: string): Format {
  if (format !== 'auto') return format;
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type === 'text/csv' || type === 'application/csv' || type === 'text/tab-separated-values') return 'csv';
  return 'file';
}

const headerText = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : (v ?? ''));

/** The file name a Content-Disposition offers: its last path segment, no control characters. */
export function filenameOf(disposition: string): string | undefined {
  let name: string | undefined;
  const star = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(disposition);
  if (star) {
    try {
      name = decodeURIComponent(star[2].trim());
    } catch {
      name = undefined;
    }
  }
  if (!name) {
    const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(disposition);
    if (plain) name = plain[1] !== undefined ? plain[1].replace(/\\(.)/g, '$1') : plain[2].trim();
  }
  if (!name) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we remove
  const base = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return base && base !== '.' && base !== '..' ? base.slice(0, 255) : undefined;
}

export async function readHttp(
  conn: HttpConn,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const op = httpOperationOf(step);
  if (forwardsInput(op)) {
    throw new ConnectorError(
      'INVALID_STATEMENT',
      'a source has no input: body "{{input}}" belongs to sink steps',
    );
  }
  const req = renderHttp(conn, op, step);
  if (op.body !== undefined) {
    if (op.method === 'GET' || op.method === 'HEAD') {
      throw new ConnectorError('INVALID_STATEMENT', `${op.method} requests carry no body`);
    }
    req.body = encodeBody(step.render(op.body), req.headers);
  }
  req.headers = { accept: 'application/json, text/csv;q=0.9, */*;q=0.8', ...req.headers };
  const res = await openHttp(req, { ...ctx, signal: signalOf(step, ctx) });
  if (res.status < 200 || res.status >= 300) {
    res.close();
    throw remoteError(res);
  }
  step.log('info', `${op.method} to ${res.url.host} answered HTTP ${res.status}`);

  const contentType = headerText(res.headers['content-type']);
  const type = mediaType(contentType);
  const response = step.step.response;
  const format = formatOf(response?.format ?? 'auto', type);
  async function* counted() {
    for await (const chunk of res.body) {
      step.count({ bytes_in: chunk.length });
      yield chunk;
    }
  }
  if (format === 'json') return jsonOutput(counted(), step);

  if (response?.cursor_path) step.log('warn', `cursor_path applies to JSON responses; this one is ${format}`);
  const ended = deferred<string | null>();
  const chunks = tracked(counted(), () => ended.resolve(null), ended.reject);
  let payload: Payload;
  if (format === 'csv') {
    const absent = /;\s*header\s*=\s*"?absent"?/i.test(contentType);
    payload = {
      kind: 'csv',
      delimiter: type === 'text/tab-separated-values' ? '\t' : ',',
      header: !absent,
      chunks,
    };
  } else {
    const filename = filenameOf(headerText(res.headers['content-disposition']));
    payload = {
      kind: 'file',
      mimeType: type || 'application/octet-stream',
      ...(filename ? { filename } : {}),
      chunks,
    };
  }
  return { payload, nextCursor: () => ended.promise };
}

/** A cursor value as text; a missing or null one keeps the last committed cursor. */
function cursorText(value: unknown, step: StepContext): string | null {
  if (value === undefined || value === null || value === '') return step.lowerBoundCursor;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function jsonOutput(body: AsyncIterable<Buffer>, step: StepContext): SourceOutput {
  const response = step.step.response;
  const recordsPath = dottedPath(response?.records_path);
  const cursorPath = response?.cursor_path ? dottedPath(response.cursor_path) : null;
  const scanner = new JsonRecordScanner(recordsPath, cursorPath);
  // The records' bytes come out as NDJSON (one scan instead of a second one in the consumer).
  const slicer = new JsonArraySlicer(recordsPath, cursorPath, true);
  const ended = deferred<string | null>();
  const warnings = (found: boolean, cursor: unknown) => {
    if (!found && recordsPath.length > 0) {
      step.log('warn', `records_path ${response?.records_path} is not in the response: no records`);
    }
    if (cursorPath && cursor === undefined) {
      step.log('warn', `cursor_path ${response?.cursor_path} is not in the response: the cursor stays`);
    }
  };
  const asRemote = (err: unknown) =>
    err instanceof JsonScanError ? new ConnectorError('REMOTE_ERROR', err.message) : err;

  async function* records(): AsyncGenerator<unknown[]> {
    const seen = { any: false };
    try {
      yield* scanRecords(body, scanner, { batch: JSON_BATCH, seen });
    } catch (err) {
      throw asRemote(err);
    }
    if (seen.any) warnings(scanner.found, scanner.cursor);
  }
  // The other shape: the records array's bytes as they arrived, one record per line, for a
  // consumer that parses JSON itself (a DuckDB transform); nothing is decoded here.
  async function* arrayBytes(): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of body) yield* slicer.push(chunk);
      yield* slicer.end();
    } catch (err) {
      throw asRemote(err);
    }
    if (slicer.any) warnings(slicer.found, slicer.cursor);
  }
  const next = (cursor: unknown) => (cursorPath ? cursorText(cursor, step) : null);
  const batches = tracked(records(), () => ended.resolve(next(scanner.cursor)), ended.reject);
  const chunks = tracked(arrayBytes(), () => ended.resolve(next(slicer.cursor)), ended.reject);
  return {
    payload: { kind: 'json', batches, array: { chunks, count: () => slicer.records, lines: true } },
    nextCursor: () => ended.promise,
  };
}
