import type { Column, SourceOutput, StepContext } from '@sluice/engine';
import type mysql from 'mysql2';
import { deferred } from '../payloads/streams';
import { type CursorTracker, cursorTracker, rowsOutput } from '../relational/cursor';
import { signalOf, sourceQuery } from '../relational/pipeline';
import type { ConnectorContext } from '../types';
import { type MysqlConnection, queryMysql } from './connect';
import { type Field, typeName } from './operations';
import { openMysqlSession } from './session';

// A pipeline source on MySQL/MariaDB: the query runs as a prepared statement (templates
// bound) in a read-only transaction, and its rows are taken in batches as the payload is
// read. When a batch is waiting downstream the socket is paused, so the server blocks
// instead of filling our memory. The whole statement is bounded by the server's statement
// limit (statement_timeout_seconds), as MySQL has no per-fetch limit.

const BATCH = 5000;
/** Rows queued before the socket is paused: the next batch arrives while one is downstream. */
const AHEAD = 2 * BATCH;

/** Rows of one streamed result, handed out in batches with backpressure on the socket. */
class RowStream {
  private queue: unknown[][] = [];
  private ended = false;
  private failure: unknown = null;
  private paused = false;
  private wake: (() => void) | null = null;
  private hasFields = false;
  readonly fields = deferred<Field[] | null>();

  constructor(
    private readonly connection: mysql.Connection,
    sql: string,
    values: unknown[],
  ) {
    // Without templates the text protocol: no prepare round trip, and mysql2 parses text rows
    // markedly faster than binary ones (FLOAT then reads as the server prints it, 1.1, not as
    // the nearest double of the single-precision value). Templates are bound server-side.
    const cmd =
      values.length === 0
        ? connection.query({ sql, rowsAsArray: true })
        : connection.execute({ sql, values: values as any[], rowsAsArray: true });
    cmd.on('fields', (fields: Field[]) => {
      if (this.hasFields) return;
      this.hasFields = true;
      this.fields.resolve(fields);
    });
    cmd.on('result', (row: unknown) => {
      if (!this.hasFields) return; // the OK packet of a statement without rows
      this.queue.push(row as unknown[]);
      if (this.queue.length >= AHEAD && !this.paused) {
        this.paused = true;
        connection.pause();
      }
      this.notify();
    });
    cmd.on('end', () => {
      this.ended = true;
      this.fields.resolve(null);
      this.notify();
    });
    cmd.on('error', (err: unknown) => {
      this.failure = err;
      this.ended = true;
      this.fields.reject(err);
      this.notify();
    });
  }

  private notify() {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** Resolves once a batch is ready or the result ended. */
  async ready(): Promise<void> {
    while (!this.ended && this.queue.length < BATCH) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** The next batch (after `ready`), or null at the end. */
  take(): unknown[][] | null {
    if (this.failure) throw this.failure;
    if (this.queue.length === 0) return null;
    const batch = this.queue.splice(0, BATCH);
    if (this.paused && this.queue.length < AHEAD) {
      this.paused = false;
      this.connection.resume();
    }
    return batch;
  }
}

export async function readMysql(
  conn: MysqlConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const query = sourceQuery(step, 'mysql');
  const session = await openMysqlSession(conn, ctx, signalOf(step, ctx), { readOnly: true });
  let stream: RowStream;
  let columns: Column[];
  let cursor: CursorTracker | null;
  try {
    await session.timed(queryMysql(session.connection, 'START TRANSACTION READ ONLY'));
    stream = new RowStream(session.connection, query.text, query.values);
    const fields = await session.timed(stream.fields.promise);
    columns = (fields ?? []).map((f) => ({ name: f.name, type: typeName(f) }));
    cursor = cursorTracker(step, columns);
  } catch (err) {
    await session.close(true);
    throw session.error(err, query.values);
  }

  async function* batches(): AsyncGenerator<unknown[][]> {
    let complete = false;
    try {
      for (;;) {
        await session.timed(stream.ready());
        const batch = stream.take();
        if (batch === null) break;
        yield batch;
      }
      await session.timed(queryMysql(session.connection, 'COMMIT'));
      complete = true;
    } catch (err) {
      throw session.error(err, query.values);
    } finally {
      await session.close(!complete);
    }
  }
  return rowsOutput(columns, batches(), cursor);
}
