import ZongJi from '@vlasky/zongji';
import type mysql from 'mysql2';
import { ConnectorError } from '../../types';
import { type Chunks, comparePositions, type Position, positionText } from './position';
import type { CapturedTable } from './tables';
import { truncatedTable } from './truncate';

// The change stream (docs/connectors/mysql.md "Runs"): the binlog from the committed position up to the
// server's position when the read started, decoded by @vlasky/zongji (row events with full
// images), handed on a transaction at a time in commit order. A read ends at a transaction
// boundary: at the target, after max_changes changes, or after max_seconds. Positions only
// move at boundaries (after a commit, a DDL statement or an event outside any transaction),
// so a checkpoint never points inside a transaction.

export type Change = {
  op: 'insert' | 'update' | 'delete' | 'truncate';
  table: CapturedTable;
  /** The row image to hand on: the new one (insert, update) or the deleted one (delete); empty for a truncate. */
  values: Record<string, unknown>;
  /** The key before an update, when it may differ from the new one. */
  before: Record<string, unknown> | null;
};

export type Committed = { at: Position; committedAt: string; changes: Change[] };

// Changes decoded ahead of the consumer before the socket pauses: few enough that they die
// young, as garbage of the young generation, rather than being copied and promoted
// (docs/benchmarks.md, CDC from MySQL/MariaDB).
const AHEAD = 1000;

/** Whether a change inside a snapshot's window was already in the chunk that covers its key. */
export function inSnapshot(chunks: Chunks, table: CapturedTable, key: unknown, at: Position): boolean {
  const list = chunks[table.name];
  if (!list || list.length === 0) return false;
  let chunk = list[list.length - 1];
  if (key !== null && key !== undefined) {
    const k = BigInt(String(key));
    chunk = list.find((c) => c.hi === null || k <= BigInt(c.hi)) ?? chunk;
  }
  return comparePositions(at, chunk.at) <= 0;
}

function driftError(t: CapturedTable, binlog: string): ConnectorError {
  const expected = t.columns.map((c) => c.name);
  return new ConnectorError(
    'UNSUPPORTED_OPERATION',
    `the columns of ${t.name} changed (ALTER TABLE): its rows in the binlog have ${binlog}, ` +
      `the table now has (${expected.join(', ')}); the changes before the DDL cannot be handed on with the ` +
      'new columns: reset the step cursor to take a new snapshot',
  );
}

/** What the library could not decode, said plainly (its messages name tables, never values). */
function decodeError(err: unknown): ConnectorError {
  const message = err instanceof Error ? err.message : String(err);
  return new ConnectorError('UNSUPPORTED_OPERATION', `the binlog could not be decoded: ${message}`);
}

/** A purged or missing binlog, named with the settings behind it (error 1236). */
export function binlogReadError(err: any, from: Position): ConnectorError | null {
  if (err?.errno !== 1236) return null;
  return new ConnectorError(
    'UNSUPPORTED_OPERATION',
    `the server cannot send the binlog from ${positionText(from)} (${String(err.sqlMessage ?? err.message)}): ` +
      'it was purged (binlog_expire_logs_seconds / expire_logs_days); raise the retention and reset the ' +
      'step cursor to take a new snapshot',
  );
}

/**
 * Streams committed transactions touching `tables` from `from` up to `until`. `ended`
 * resolves with the position reached (a transaction boundary) once the iterator is done.
 */
export function readBinlog(opts: {
  ctrl: mysql.Connection;
  from: Position;
  until: Position;
  tables: CapturedTable[];
  maxChanges: number;
  deadline: number;
  now: () => number;
  signal: AbortSignal;
  mapError(err: unknown): ConnectorError;
}): { transactions: AsyncGenerator<Committed>; position(): Position } {
  const byName = new Map(opts.tables.map((t) => [`${t.database}\u0000${t.table}`, t]));
  const includeSchema: Record<string, string[]> = {};
  for (const t of opts.tables) includeSchema[t.database] = [...(includeSchema[t.database] ?? []), t.table];

  let position: Position = opts.from;
  let inTransaction = false;
  let pending: Change[] = [];
  let count = 0;
  let done = false;
  let failure: unknown = null;
  const queue: Committed[] = [];
  let queued = 0;
  let paused = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };

  // Timezone Z: TIMESTAMP values in UTC, as the snapshot session reads them.
  (opts.ctrl as unknown as { config: { timezone: string } }).config.timezone = 'Z';
  // The library opens the binlog connection from the control session's settings, its socket
  // factory included, so it connects to the address the egress guard checked (connect.ts).
  const zongji = new ZongJi(opts.ctrl);
  const finish = () => {
    if (done) return;
    done = true;
    zongji.stop();
    notify();
  };
  const fail = (err: unknown) => {
    if (done) return;
    failure = err;
    finish();
  };
  const atBoundary = (p: Position) => {
    position = p;
    if (comparePositions(p, opts.until) >= 0 || count >= opts.maxChanges || opts.now() >= opts.deadline)
      finish();
  };
  const timer = setTimeout(
    () => {
      if (!inTransaction) finish();
    },
    Math.max(0, opts.deadline - opts.now()),
  );
  const abort = () => fail(opts.signal.reason ?? new ConnectorError('TIMEOUT', 'the read was canceled'));
  opts.signal.addEventListener('abort', abort, { once: true });

  const file = () => String(zongji.options.filename ?? position.file);
  const commit = (e: any) => {
    inTransaction = false;
    const at = { file: file(), pos: Number(e.nextPosition) };
    if (pending.length > 0) {
      queue.push({ at, committedAt: new Date(Number(e.timestamp)).toISOString(), changes: pending });
      count += pending.length;
      queued += pending.length;
      pending = [];
      if (queued >= AHEAD && !paused) {
        paused = true;
        zongji.connection?.pause();
      }
      notify();
    }
    atBoundary(at);
  };

  zongji.on('error', (err: any) => {
    const fromServer = typeof err?.errno === 'number' || typeof err?.code === 'string';
    fail(binlogReadError(err, opts.from) ?? (fromServer ? opts.mapError(err) : decodeError(err)));
  });
  zongji.on('binlog', (e: any) => {
    if (done) return;
    const name: string = e.getEventName();
    switch (name) {
      case 'tablemap': {
        const t = byName.get(`${e.schemaName}\u0000${e.tableName}`);
        const entry = e.tableMap?.[e.tableId];
        if (!t) return;
        // Without binlog_row_metadata=FULL the names are the table's now: only the count tells.
        const names: string[] = (entry?.columnSchemas ?? []).map((c: any) => String(c.COLUMN_NAME));
        if (Number(e.columnCount) !== t.columns.length) {
          fail(driftError(t, `${e.columnCount} columns`));
        } else if (names.join('\u0000') !== t.columns.map((c) => c.name).join('\u0000')) {
          fail(driftError(t, `(${names.join(', ')})`));
        }
        return;
      }
      case 'writerows':
      case 'updaterows':
      case 'deleterows': {
        const entry = e.tableMap?.[e.tableId];
        const t = entry ? byName.get(`${entry.parentSchema}\u0000${entry.tableName}`) : undefined;
        if (!t) return;
        for (const row of e.rows as any[]) {
          if (name === 'updaterows')
            pending.push({ op: 'update', table: t, values: row.after, before: row.before });
          else
            pending.push({
              op: name === 'writerows' ? 'insert' : 'delete',
              table: t,
              values: row,
              before: null,
            });
        }
        return;
      }
      case 'mariadbgtid':
      case 'gtid':
      case 'anonymousgtid':
        inTransaction = true;
        return;
      case 'xid':
        commit(e);
        return;
      case 'query': {
        const q = String(e.query).trim().toUpperCase();
        if (
          q === 'BEGIN' ||
          q.startsWith('XA START') ||
          q.startsWith('XA END') ||
          q.startsWith('SAVEPOINT')
        ) {
          inTransaction = true;
          return;
        }
        // A TRUNCATE of a captured table is a change of its own (a statement, never rows).
        const cut = truncatedTable(String(e.query), String(e.schema ?? ''));
        const t = cut ? byName.get(`${cut.database}\u0000${cut.table}`) : undefined;
        if (t) pending.push({ op: 'truncate', table: t, values: {}, before: null });
        // COMMIT, ROLLBACK, XA COMMIT or a DDL statement: a boundary.
        commit(e);
        return;
      }
      case 'rotate':
        if (!inTransaction) atBoundary({ file: String(e.binlogName), pos: Number(e.position) });
        return;
      default:
        if (!inTransaction && Number(e.nextPosition) > 0)
          atBoundary({ file: file(), pos: Number(e.nextPosition) });
    }
  });

  if (comparePositions(opts.from, opts.until) >= 0) {
    done = true;
  } else {
    zongji.start({
      filename: opts.from.file,
      position: opts.from.pos,
      // A replica id of its own per read: the server drops an older dump with the same id.
      serverId: 0x40000000 + Math.floor(Math.random() * 0x3fffffff),
      includeSchema,
    });
  }

  async function* transactions(): AsyncGenerator<Committed> {
    try {
      for (;;) {
        const next = queue.shift();
        if (next) {
          queued -= next.changes.length;
          if (paused && queued < AHEAD / 2) {
            paused = false;
            zongji.connection?.resume();
          }
          yield next;
          continue;
        }
        if (failure) throw failure;
        if (done) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', abort);
      if (!done) {
        done = true;
        zongji.stop();
      }
    }
  }
  return { transactions: transactions(), position: () => position };
}
