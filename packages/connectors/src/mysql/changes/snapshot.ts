import type { ConnectorContext } from '../../types';
import { type MysqlConnection, queryMysql } from '../connect';
import { ResultStream } from '../result-stream';
import { openMysqlSession } from '../session';
import { type Checkpoint, type Chunks, comparePositions, type Position } from './position';
import { gtidAt, type ServerFacts } from './server';
import { type CapturedTable, integerKey, qualified, quoteName } from './tables';

// The initial snapshot (docs/connectors/mysql.md "Initial snapshot"): the tables' rows read inside a
// consistent snapshot whose binlog position is known exactly, handed on as `insert` rows.
// MariaDB reports the snapshot's position itself (binlog_snapshot_file/_position, no lock);
// MySQL needs FLUSH TABLES WITH READ LOCK for the moment the snapshot and position are taken.
//
// A run copies at most max_changes rows. A table with a single integer key is copied in key
// ranges, so a large one spreads over several runs; each run's range is recorded with that
// run's snapshot position (a chunk), and the stream, which starts at the first chunk's
// position, drops a change to a key whose chunk was copied at or after the change's commit
// (stream.ts). Other tables are copied whole in one run.

export type SnapshotState = Extract<Checkpoint, { phase: 'snapshot' }>;

async function openSnapshot(
  session: { connection: import('mysql2').Connection; timed<T>(p: Promise<T>): Promise<T> },
  facts: ServerFacts,
): Promise<Position> {
  const q = (sql: string) => session.timed(queryMysql<any[]>(session.connection, sql));
  await q("SET SESSION time_zone = '+00:00'");
  await q('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
  if (facts.mariadb) {
    await q('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    const rows = await q("SHOW STATUS LIKE 'binlog_snapshot_%'");
    const v = (name: string) => rows.find((r) => r.Variable_name === name)?.Value;
    const p: Position = {
      file: String(v('Binlog_snapshot_file')),
      pos: Number(v('Binlog_snapshot_position')),
    };
    const gtid = await gtidAt(session.connection, facts, p);
    return gtid === undefined ? p : { ...p, gtid };
  }
  await q('FLUSH TABLES WITH READ LOCK');
  try {
    await q('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    const [row] = await q('SHOW MASTER STATUS');
    return { file: String(row.File), pos: Number(row.Position) };
  } finally {
    await q('UNLOCK TABLES');
  }
}

export type SnapshotRun = {
  batches: AsyncGenerator<unknown[][]>;
  /** The checkpoint after the rows were read (valid once `batches` ended). */
  next(): Checkpoint;
};

/**
 * Copies the next part of the snapshot. `state` is null on the first run. `toRow` turns a
 * table's row (its columns in order) into the change row.
 */
export async function readSnapshot(opts: {
  conn: MysqlConnection;
  ctx: ConnectorContext;
  signal: AbortSignal;
  facts: ServerFacts;
  tables: CapturedTable[];
  state: SnapshotState | null;
  maxRows: number;
  toRow(table: CapturedTable, values: unknown[], at: Position): unknown[];
}): Promise<SnapshotRun> {
  const { tables, maxRows } = opts;
  const session = await openMysqlSession(opts.conn, opts.ctx, opts.signal, { readOnly: true });
  let at: Position;
  try {
    at = await openSnapshot(session, opts.facts);
  } catch (err) {
    await session.close(true);
    throw session.error(err);
  }
  const state: SnapshotState = opts.state
    ? structuredClone(opts.state)
    : { phase: 'snapshot', from: at, table: 0, after: null, chunks: {} };
  let result: Checkpoint | null = null;

  // JSON as its exact text, as the binlog gives it (numbers beyond a double's precision
  // included), for this session's use only.
  const config = session.connection.config as { jsonStrings?: boolean };
  const jsonStrings = config.jsonStrings;

  async function* rows(): AsyncGenerator<unknown[][]> {
    let complete = false;
    let budget = maxRows;
    config.jsonStrings = true;
    try {
      while (state.table < tables.length && budget > 0) {
        const t = tables[state.table];
        const key = integerKey(t);
        const list = t.columns.map((c) => quoteName(c.name)).join(', ');
        const sql = key
          ? `SELECT ${list} FROM ${qualified(t)}${state.after === null ? '' : ` WHERE ${quoteName(key)} > ${state.after}`} ORDER BY ${quoteName(key)} LIMIT ${budget}`
          : `SELECT ${list} FROM ${qualified(t)}`;
        const keyIndex = key ? t.columns.findIndex((c) => c.name === key) : -1;
        const stream = new ResultStream(session.connection, sql, []);
        await session.timed(stream.fields.promise);
        stream.asRows();
        let count = 0;
        let last: string | null = null;
        for (;;) {
          await session.timed(stream.ready());
          const batch = stream.take();
          if (batch === null) break;
          count += batch.length;
          if (keyIndex >= 0) last = String(batch[batch.length - 1][keyIndex]);
          yield batch.map((values) => opts.toRow(t, values, at));
        }
        const done = !key || count < budget;
        budget -= count;
        const chunks: Chunks = state.chunks;
        chunks[t.name] = [...(chunks[t.name] ?? []), { hi: done ? null : last, at }];
        if (done) {
          state.table += 1;
          state.after = null;
        } else {
          state.after = last;
        }
      }
      await session.timed(queryMysql(session.connection, 'COMMIT'));
      complete = true;
    } catch (err) {
      throw session.error(err);
    } finally {
      config.jsonStrings = jsonStrings;
      await session.close(!complete);
    }
    result = state.table >= tables.length ? streamAfterSnapshot(state) : state;
  }
  return {
    batches: rows(),
    next: () => {
      if (!result) throw new Error('the snapshot was not read to its end');
      return result;
    },
  };
}

/** Turns a snapshot state whose tables are all copied into the stream checkpoint. */
export function streamAfterSnapshot(state: SnapshotState): Checkpoint {
  const positions = Object.values(state.chunks).flatMap((list) => list.map((c) => c.at));
  const until = positions.reduce((a, b) => (comparePositions(a, b) >= 0 ? a : b), state.from);
  if (comparePositions(until, state.from) === 0) return { phase: 'stream', at: state.from };
  return { phase: 'stream', at: state.from, window: { until, chunks: state.chunks } };
}
