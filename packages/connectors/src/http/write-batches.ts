import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { recordsOf } from '../payloads/encode';
import { type ConnectorContext, ConnectorError } from '../types';
import { type HttpConn, type HttpOperation, remoteError, renderHttp, signalOf } from './render';
import { mediaType } from './request';
import { openHttp } from './transport';

// An HTTP sink with `batch_size`: the upstream records go out as one request per batch of at
// most that many records (a JSON array, or one record per line for NDJSON types), for APIs that
// cap how much one call may carry. Requests are sent one after the other; each is held in
// memory only while it is sent. A batch answered with a non-2xx status ends the step: the
// batches before it were accepted by the remote and stay (an HTTP API has no transaction to
// roll back), so make the receiving endpoint idempotent.

const NDJSON = new Set([
  'application/x-ndjson',
  'application/jsonl',
  'application/json-lines',
  'application/jsonlines',
]);

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

export async function writeHttpBatches(
  conn: HttpConn,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
  op: HttpOperation & { batch_size: number },
): Promise<SinkResult> {
  if (input.kind === 'file' || input.kind === 'form') {
    throw invalid(`batch_size splits records; a ${input.kind} payload has none`);
  }
  const explicit = renderHttp(conn, op, step).headers['content-type'];
  const type = mediaType(explicit);
  const lines = NDJSON.has(type);
  if (!(type === '' || type === 'application/json' || type.endsWith('+json') || lines)) {
    throw invalid(`batch_size sends JSON or NDJSON; a ${type} body cannot be split into batches`);
  }
  let rows = 0;
  let bytes = 0;
  let batches = 0;
  const send = async (batch: unknown[]) => {
    const text = batch.map((r) => JSON.stringify(r) ?? 'null');
    const body = Buffer.from(lines ? `${text.join('\n')}\n` : `[${text.join(',')}]`);
    // Rendered per request: a secret or template is resolved at the moment of the call.
    const req = renderHttp(conn, op, step);
    req.headers['content-type'] = explicit ?? 'application/json';
    req.body = body;
    const res = await openHttp(req, { ...ctx, signal: signalOf(step, ctx) });
    res.close();
    batches++;
    if (res.status < 200 || res.status >= 300) {
      const err = remoteError(res);
      throw new ConnectorError(
        err.code,
        `batch ${batches}: ${err.message}; ${rows} records in ${batches - 1} earlier batches were accepted`,
      );
    }
    rows += batch.length;
    bytes += body.length;
    step.count({ rows_out: batch.length, bytes_out: body.length });
  };
  let pending: unknown[] = [];
  for await (const batch of recordsOf(input)) {
    for (const record of batch) {
      pending.push(record);
      if (pending.length >= op.batch_size) {
        await send(pending);
        pending = [];
      }
    }
  }
  if (pending.length > 0) await send(pending);
  step.log('info', `${op.method} sent ${rows} records in ${batches} requests of at most ${op.batch_size}`);
  return { rows, bytes };
}
