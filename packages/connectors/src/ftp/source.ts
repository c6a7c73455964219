import type { Payload, SourceOutput, StepContext } from '@sluice/engine';
import { jsonLineRecords } from '../payloads/json-lines';
import { JsonRecordScanner, JsonScanError, scanRecords } from '../payloads/json-records';
import { deferred, tracked } from '../payloads/streams';
import { signalOf } from '../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../types';
import { openFtp } from './client';
import { type FtpConn, type FtpOperation, ftpOperationSchema } from './config';
import { defaultDelimiter, formatOf, isLines, mimeOf, spreadsheetTable } from './formats';
import { relativeTo, renderText, resolveBelow } from './paths';
import { downloadAll, downloadStream, sizeOf } from './transfer';

// Pipeline steps over FTP. A source streams one file into the payload its format calls for
// (CSV bytes, JSON records, raw file bytes; a spreadsheet, which cannot be streamed, as
// records); a sink streams its upstream payload into one file, landed atomically.

const JSON_BATCH = 1000;
export const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

export function ftpOperationOf(step: StepContext, kind: 'read' | 'write'): FtpOperation {
  const parsed = ftpOperationSchema.safeParse(step.step.operation);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(
      `operation${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const op = parsed.data;
  if (op.operation && op.operation !== kind) {
    throw invalid(`a ${kind === 'read' ? 'source' : 'sink'} step ${kind}s: operation must be ${kind}`);
  }
  return op;
}

export const renderPath = (op: FtpOperation, step: StepContext) =>
  renderText(op.path, (name) => step.render(`{{${name}}}`));

export async function readFtp(
  conn: FtpConn,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const op = ftpOperationOf(step, 'read');
  const rendered = renderPath(op, step);
  const s = await openFtp(conn, { ...ctx, signal: signalOf(step, ctx) });
  const ended = deferred<string | null>();
  try {
    const full = resolveBelow(s.home, rendered);
    const size = await sizeOf(s, full);
    if (size === null) throw new ConnectorError('QUERY_FAILED', 'the file does not exist on the FTP server');
    const format = formatOf(op.format, full);
    step.log(
      'info',
      `reading ${relativeTo(s.home, full)} (${size} bytes, ${format}) from ${conn.config.host}${s.secure ? ' over TLS' : ''}`,
    );
    if (format === 'spreadsheet') {
      const bytes = await downloadAll(s, full, ctx.limits.maxResponseBytes);
      step.count({ bytes_in: bytes.length });
      s.close();
      const { table } = await spreadsheetTable(bytes, {
        sheet: op.sheet,
        range: op.range,
        hasHeader: op.has_header ?? true,
      });
      async function* records() {
        for (let i = 0; i < table.rows.length; i += JSON_BATCH) {
          yield table.rows
            .slice(i, i + JSON_BATCH)
            .map((r) => Object.fromEntries(table.columns.map((c, j) => [c, r[j]])));
        }
      }
      const batches = tracked(records(), () => ended.resolve(null), ended.reject);
      return { payload: { kind: 'json', batches }, nextCursor: () => ended.promise };
    }
    const { chunks, done } = downloadStream(s, full);
    async function* counted(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of chunks) {
          step.count({ bytes_in: chunk.length });
          yield chunk as Buffer;
        }
        await done; // the server confirmed the whole transfer
      } catch (err) {
        throw s.fail(err, 'reading the file');
      } finally {
        s.close();
      }
    }
    if (format === 'json') return jsonOutput(counted(), isLines(full), ended);
    const stream = tracked(counted(), () => ended.resolve(null), ended.reject);
    const payload: Payload =
      format === 'csv'
        ? {
            kind: 'csv',
            delimiter: op.delimiter ?? defaultDelimiter(full),
            header: op.has_header ?? true,
            chunks: stream,
          }
        : { kind: 'file', mimeType: mimeOf(full), filename: full.split('/').pop(), chunks: stream };
    return { payload, nextCursor: () => ended.promise };
  } catch (err) {
    s.close();
    throw s.fail(err, 'reading the file');
  }
}

function jsonOutput(
  body: AsyncIterable<Buffer>,
  lines: boolean,
  ended: ReturnType<typeof deferred<string | null>>,
): SourceOutput {
  async function* records(): AsyncGenerator<unknown[]> {
    if (lines) {
      yield* jsonLineRecords(body, { batch: JSON_BATCH });
      return;
    }
    try {
      yield* scanRecords(body, new JsonRecordScanner([], null), { batch: JSON_BATCH });
    } catch (err) {
      if (err instanceof JsonScanError)
        throw new ConnectorError('QUERY_FAILED', 'the file is not valid JSON');
      throw err;
    }
  }
  const batches = tracked(records(), () => ended.resolve(null), ended.reject);
  return { payload: { kind: 'json', batches }, nextCursor: () => ended.promise };
}

// ---- sink -------------------------------------------------------------------------------------

export type Body = { chunks: AsyncIterable<Buffer>; rows(): number };
