import type { FilePayload, FormPayload, Payload, SinkResult, StepContext } from '@sluice/engine';
import { csvAsIs, csvBytes, jsonBytes } from '../payloads/encode';
import { deferred, tracked } from '../payloads/streams';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { forwardsInput, type HttpConn, httpOperationOf, remoteError, renderHttp, signalOf } from './render';
import { encodeBody, mediaType, newBoundary, quoteFormName } from './request';
import { openHttp } from './transport';
import { writeHttpBatches } from './write-batches';

// A pipeline sink over HTTP (service-api.md HTTP rule 5): `body: "{{input}}"` sends the
// upstream payload in its own representation, streamed (rows and JSON as a JSON array, CSV
// and files as their bytes, forms URL-encoded or multipart). One attempt: a POST is not
// assumed safe to replay.

type Body = { contentType: string; chunks: AsyncIterable<Buffer>; rows(): number };

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

const NDJSON = new Set([
  'application/x-ndjson',
  'application/jsonl',
  'application/json-lines',
  'application/jsonlines',
]);
const isJson = (t: string) => t === 'application/json' || t.endsWith('+json');
const isForm = (t: string) => t === 'multipart/form-data' || t === 'application/x-www-form-urlencoded';

/** Rows and records as a JSON array, or one per line for the NDJSON types. */
function jsonBody(payload: Payload, type: string): Body {
  const lines = NDJSON.has(type);
  return { ...jsonBytes(payload, lines), contentType: lines ? type : type || 'application/json' };
}

async function* bytesOf(file: FilePayload) {
  for await (const chunk of file.chunks) yield Buffer.from(chunk);
}

function multipartBody(fields: FormPayload['fields']): Body {
  const boundary = newBoundary();
  async function* chunks() {
    for (const f of fields) {
      const name = quoteFormName(f.name);
      if ('value' in f) {
        yield Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${f.value}\r\n`,
        );
        continue;
      }
      const filename = quoteFormName(f.file.filename ?? f.name);
      const type = f.file.mimeType.replace(/[\r\n]/g, '');
      yield Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`,
      );
      yield* bytesOf(f.file);
      yield Buffer.from('\r\n');
    }
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, chunks: chunks(), rows: () => 0 };
}

async function* once(buffer: Buffer) {
  yield buffer;
}

/** The upstream payload as a body; an explicit compatible Content-Type overrides the default. */
function bodyOf(input: Payload, explicit: string | undefined): Body {
  const type = mediaType(explicit);
  const refuse = () =>
    invalid(
      `a ${input.kind} payload cannot be sent as ${type}; remove the Content-Type header or pick a compatible one`,
    );
  switch (input.kind) {
    case 'rows':
    case 'json':
      if (type === '' || isJson(type) || NDJSON.has(type)) return jsonBody(input, type);
      if (type === 'text/csv') return { ...csvBytes(input), contentType: 'text/csv' };
      throw refuse();
    case 'csv':
      if (isJson(type) || NDJSON.has(type)) return jsonBody(input, type);
      if (isForm(type)) throw refuse();
      return {
        ...csvAsIs(input),
        contentType: explicit ?? (input.header ? 'text/csv' : 'text/csv; header=absent'),
      };
    case 'file':
      if (type === 'multipart/form-data') return multipartBody([{ name: 'file', file: input }]);
      if (type === 'application/x-www-form-urlencoded') throw refuse();
      return { contentType: explicit ?? input.mimeType, chunks: bytesOf(input), rows: () => 0 };
    case 'form': {
      const encoding =
        type === 'multipart/form-data'
          ? 'multipart'
          : type === ''
            ? input.encoding
            : type === 'application/x-www-form-urlencoded'
              ? 'urlencoded'
              : null;
      if (encoding === null) throw refuse();
      if (encoding === 'multipart') return multipartBody(input.fields);
      const params = new URLSearchParams();
      for (const f of input.fields) {
        if (!('value' in f)) throw invalid(`form field ${f.name} is a file: files need multipart/form-data`);
        params.append(f.name, f.value);
      }
      return {
        contentType: 'application/x-www-form-urlencoded',
        chunks: once(Buffer.from(params.toString())),
        rows: () => 0,
      };
    }
  }
}

/** Reads a payload nobody sends, so the steps before this one can finish. */
async function drain(input: Payload): Promise<void> {
  if (input.kind === 'form') return;
  if (input.kind === 'rows' || input.kind === 'json') for await (const _ of input.batches);
  else for await (const _ of input.chunks);
}

export async function writeHttp(
  conn: HttpConn,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  assertWritable(ctx);
  const op = httpOperationOf(step);
  const req = renderHttp(conn, op, step);
  if (op.body !== undefined && (op.method === 'GET' || op.method === 'HEAD')) {
    throw invalid(`${op.method} requests carry no body`);
  }
  if (op.batch_size !== undefined) {
    if (!forwardsInput(op))
      throw invalid('batch_size needs body "{{input}}": it splits the upstream records');
    return writeHttpBatches(conn, input, step, ctx, { ...op, batch_size: op.batch_size });
  }
  let bytes = 0;
  let rows = () => 0;
  let inputError: unknown = null;
  const uploaded = deferred<void>();
  if (forwardsInput(op)) {
    const body = bodyOf(input, req.headers['content-type']);
    req.headers['content-type'] = body.contentType;
    rows = body.rows;
    async function* counted() {
      try {
        for await (const chunk of body.chunks) {
          bytes += chunk.length;
          yield chunk;
        }
      } catch (err) {
        // The upstream failed: that error, not the aborted request, is the step's error.
        inputError = err;
        throw err;
      }
    }
    req.body = tracked(counted(), () => uploaded.resolve(), uploaded.reject);
  } else {
    await drain(input);
    if (op.body !== undefined) {
      const encoded = encodeBody(step.render(op.body), req.headers);
      bytes = Buffer.byteLength(encoded);
      req.body = encoded;
    }
    uploaded.resolve();
  }
  const res = await openHttp(req, { ...ctx, signal: signalOf(step, ctx) }).catch((err) => {
    throw inputError ?? err;
  });
  // The answer's body is of no use to the run; dropping it also ends the exchange.
  res.close();
  step.log('info', `${op.method} to ${res.url.host} answered HTTP ${res.status}`);
  if (res.status < 200 || res.status >= 300) throw remoteError(res);
  // A server that answered before reading everything either closed the upload (settled as
  // not consumed) or lets it finish; wait for one of the two, within the request timeout.
  let timer: NodeJS.Timeout | undefined;
  const complete = await Promise.race([
    uploaded.promise.then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((r) => {
      timer = setTimeout(() => r(false), req.timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if (inputError) throw inputError;
  if (!complete) {
    throw new ConnectorError(
      'REMOTE_ERROR',
      `${res.url.host} answered HTTP ${res.status} before it received the whole body`,
    );
  }
  return { rows: rows(), bytes };
}
