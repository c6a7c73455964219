import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { csvAsIs, csvBytes, jsonBytes, recordsOf } from '../payloads/encode';
import { signalOf } from '../relational/pipeline';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { openFtp } from './client';
import type { FtpConn, FtpOperation } from './config';
import { defaultDelimiter, type Format, formatOf, isLines, recordsTable, spreadsheetBytes } from './formats';
import { relativeTo, resolveBelow } from './paths';
import { type Body, ftpOperationOf, invalid, renderPath } from './source';
import { uploadAtomic } from './transfer';

/** CSV as it came when its delimiter and header match the target's, else the rows re-encoded. */
function csvBody(input: Payload, delimiter: string, header: boolean): Body {
  if (input.kind === 'csv' && input.delimiter === delimiter && input.header === header) return csvAsIs(input);
  return csvBytes(input, delimiter, header);
}

async function* bytesOf(chunks: AsyncIterable<Uint8Array>) {
  for await (const c of chunks) yield Buffer.from(c);
}

// Excel's own limit; a spreadsheet is built in memory, so it is bounded.
const MAX_SHEET_ROWS = 1_048_575;

async function spreadsheetBody(input: Payload, op: FtpOperation): Promise<Body> {
  const items: unknown[] = [];
  for await (const batch of recordsOf(input)) {
    for (const r of batch) items.push(r);
    if (items.length > MAX_SHEET_ROWS) {
      throw new ConnectorError('RESPONSE_TOO_LARGE', `a spreadsheet holds at most ${MAX_SHEET_ROWS} rows`);
    }
  }
  const table = recordsTable(items);
  const bytes = await spreadsheetBytes(table, {
    sheet: op.sheet,
    range: op.range,
    hasHeader: op.has_header ?? true,
  });
  async function* once() {
    yield bytes;
  }
  return { chunks: once(), rows: () => items.length };
}

async function bodyOf(input: Payload, format: Format, op: FtpOperation, target: string): Promise<Body> {
  if (input.kind === 'form') throw invalid('a form payload cannot be written to an FTP file');
  switch (format) {
    case 'csv':
      if (input.kind === 'file') return { chunks: bytesOf(input.chunks), rows: () => 0 };
      return csvBody(input, op.delimiter ?? defaultDelimiter(target), op.has_header ?? true);
    case 'json':
      if (input.kind === 'file') return { chunks: bytesOf(input.chunks), rows: () => 0 };
      return jsonBytes(input, isLines(target));
    case 'spreadsheet':
      if (input.kind === 'file') return { chunks: bytesOf(input.chunks), rows: () => 0 };
      return spreadsheetBody(input, op);
    default:
      if (input.kind === 'file' || input.kind === 'csv')
        return { chunks: bytesOf(input.chunks), rows: () => 0 };
      return jsonBytes(input, false);
  }
}

export async function writeFtp(
  conn: FtpConn,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  assertWritable(ctx);
  const op = ftpOperationOf(step, 'write');
  const rendered = renderPath(op, step);
  const format = formatOf(op.format, rendered);
  const s = await openFtp(conn, { ...ctx, signal: signalOf(step, ctx) });
  // An upstream failure is the step's error as it is, not an FTP error.
  let upstream: unknown = null;
  async function* watched(chunks: AsyncIterable<Buffer>) {
    try {
      yield* chunks;
    } catch (err) {
      upstream = err;
      throw err;
    }
  }
  try {
    const full = resolveBelow(s.home, rendered);
    const body = await bodyOf(input, format, op, full);
    const written = await uploadAtomic(s, full, watched(body.chunks), op.overwrite);
    step.log(
      'info',
      `wrote ${relativeTo(s.home, full)} (${written.bytes} bytes, ${format}) to ${conn.config.host}${s.secure ? ' over TLS' : ''}`,
    );
    return { rows: body.rows(), bytes: written.bytes };
  } catch (err) {
    throw upstream ?? s.fail(err, 'writing the file');
  } finally {
    s.close();
  }
}
