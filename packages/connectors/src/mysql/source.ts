import type { Column, RowsPayload, SourceOutput, StepContext } from '@sluice/engine';
import { deferred, tracked } from '../payloads/streams';
import { type CursorTracker, cursorIndex, cursorTracker, rowsOutput } from '../relational/cursor';
import { signalOf, sourceQuery } from '../relational/pipeline';
import type { ConnectorContext } from '../types';
import type { MysqlConnection } from './connect';
import { type BinaryTarget, type Code, copyBinaryPlan } from './copy-binary-plan';
import { CopyBinaryRows } from './copy-binary-rows';
import { CopyTextRows, copyTextKinds } from './copy-text-rows';
import { type Field, typeName } from './operations';
import { ResultStream, type RowEncoder } from './result-stream';
import { openMysqlSession } from './session';

// A pipeline source on MySQL/MariaDB: the query runs as one statement on a read-only session
// (as a prepared statement when it has templates), and its rows are taken as the payload is read:
// in batches, or, for a consumer that reads COPY text (the PostgreSQL sink), as COPY text
// written straight from the wire (copy-text-rows.ts, `RowsPayload.csv` with format text), or
// as COPY binary for the target's column types when the consumer asks (copy-binary-rows.ts).
// Templated queries and columns that text cannot carry as the row path would keep the rows
// only. The whole statement is bounded by the server's statement limit
// (statement_timeout_seconds), as MySQL has no per-fetch limit. The statement is its own
// transaction (autocommit): InnoDB reads every row of it from one snapshot, and the session's
// `TRANSACTION READ ONLY` (connect.ts) refuses writes in it, so no START TRANSACTION before it
// and no COMMIT after it wait a round trip each (docs/scaling.md#round-trips-to-the-data-servers).

export async function readMysql(
  conn: MysqlConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const query = sourceQuery(step, 'mysql');
  const session = await openMysqlSession(conn, ctx, signalOf(step, ctx), { readOnly: true });
  let stream: ResultStream;
  let columns: Column[];
  let fields: Field[];
  let cursor: CursorTracker | null;
  try {
    stream = new ResultStream(session.connection, query.text, query.values);
    fields = (await session.timed(stream.fields.promise)) ?? [];
    columns = fields.map((f) => ({ name: f.name, type: typeName(f) }));
    cursor = cursorTracker(step, columns);
  } catch (err) {
    await session.close(true);
    throw session.error(err, query.values);
  }

  /** The result in the shape `begin` chose; the session closes either way (kept only when read to its end). */
  async function* drain<T>(begin: () => void, take: () => T | null): AsyncGenerator<T> {
    let complete = false;
    try {
      begin();
      for (;;) {
        await session.timed(stream.ready());
        const next = take();
        if (next === null) break;
        yield next;
      }
      complete = true;
    } catch (err) {
      throw session.error(err, query.values);
    } finally {
      await session.close(!complete);
    }
  }
  const batches = drain(
    () => stream.asRows(),
    () => stream.take(),
  );
  const output = rowsOutput(columns, batches, cursor);
  const kinds = query.values.length > 0 ? { reason: 'the query has templates' } : copyTextKinds(fields);
  if (columns.length === 0) return output;
  if ('reason' in kinds) {
    step.log('info', `rows are not offered as COPY text: ${kinds.reason}`);
    return output;
  }

  // The same rows as COPY text, for a consumer that takes them so instead of the batches, or
  // as COPY binary once that consumer told the target's types (asBinary).
  const columnKinds = kinds.kinds;
  let encoder: RowEncoder | null = null;
  let binary: Code[] | null = null;
  const index = cursorIndex(step, columns);
  // The cursor sees its column's text, as the batches' tracker would see the value.
  const textCursor = index === null ? null : cursorTracker(step, [columns[index]]);
  const see =
    textCursor && index !== null
      ? { index, see: (v: string | Buffer | null) => textCursor.observe([[v]]) }
      : null;
  const ended = deferred<string | null>();
  const begin = () => {
    const codes = binary;
    encoder =
      codes === null
        ? stream.asCopy((onChunk) => new CopyTextRows(columnKinds, onChunk, undefined, see))
        : stream.asCopy((onChunk) => new CopyBinaryRows(codes, names, onChunk, undefined, see, columnKinds));
    if (!stream.raw)
      step.log('info', 'this mysql2 has no row handler to take over: its rows are encoded as COPY input');
  };
  const names = columns.map((c) => c.name);
  const asBinary = (targets: BinaryTarget[]): string | null => {
    if (encoder !== null) return 'the rows are already being read';
    const plan = copyBinaryPlan(fields, columnKinds, targets);
    if ('reason' in plan) return plan.reason;
    binary = plan.codes;
    return null;
  };
  const text = () => drain(begin, () => stream.takeChunk());
  const used = () => encoder !== null;
  return {
    payload: {
      ...(output.payload as RowsPayload),
      csv: {
        format: 'text',
        asBinary,
        chunks: tracked(text(), () => ended.resolve(textCursor?.value() ?? null), ended.reject),
        count: () => encoder?.rows ?? 0,
      },
    },
    nextCursor: () => (used() ? ended.promise : output.nextCursor()),
  };
}
