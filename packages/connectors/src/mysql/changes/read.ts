import type { CdcOperation, SourceOutput, StepContext } from '@sluice/engine';
import { deferred, tracked } from '../../payloads/streams';
import { signalOf } from '../../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../../types';
import { closeMysql, connectMysql, type MysqlConnection, mysqlError } from '../connect';
import { changeRows } from './change-rows';
import {
  type Checkpoint,
  type Chunks,
  checkpointText,
  comparePositions,
  type Position,
  parseCheckpoint,
  positionText,
} from './position';
import { binaryLogs, currentPosition, gtidAt, requireRetained, requireSettings, serverFacts } from './server';
import { readSnapshot } from './snapshot';
import { type Change, inSnapshot, readBinlog } from './stream';
import { type CapturedTable, describeTables, type TableColumn, tableName, unionColumns } from './tables';
import { snapshotValue } from './values';

// One run of a MySQL/MariaDB capture (docs/connectors/mysql.md "Change data
// capture"): the next part of the initial snapshot while it is not complete, else the binlog
// from the committed position up to the server's position when the run started. The rows
// are the change rows of the contract (connectors/src/types.ts ChangesCapability);
// `nextCursor()` gives the checkpoint to commit once the sinks committed.

// Change rows a batch: small, so a row is consumed before the next scavenge (stream.ts AHEAD).
const BATCH = 500;

export function cdcOperationOf(step: StepContext): CdcOperation {
  const op = step.step.operation;
  if (op.operation_type !== 'cdc') {
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `a capture reads a cdc operation, not ${op.operation_type}`,
    );
  }
  return op;
}

class SchemaRefused extends Error {
  constructor(readonly reason: unknown) {
    super('the server refused the captured schema');
  }
}

/** The captured tables, described; a missing one or one without a key is an error here. */
export async function capturedTables(
  ctrl: import('mysql2').Connection,
  op: CdcOperation,
  database: string,
  ctx: Pick<ConnectorContext, 'onCapturedSchema'> = {},
): Promise<CapturedTable[]> {
  const names = op.tables.map((n) => {
    const t = tableName(n, database);
    if (!t)
      throw new ConnectorError(
        'INVALID_STATEMENT',
        `${JSON.stringify(n)} is not a table name (database.table)`,
      );
    return t;
  });
  const described = await describeTables(ctrl, names);
  if (ctx.onCapturedSchema) {
    const seen = names.map((n) => {
      const t = described.get(n.name);
      return {
        schema: n.database,
        name: n.table,
        columns: t ? t.columns.map((c) => ({ name: c.name, type: c.type })) : null,
      };
    });
    // The server's answer (a broken contract) is rethrown as it is (docs/cdc.md "Schema changes").
    await ctx.onCapturedSchema(seen).catch((err) => {
      throw new SchemaRefused(err);
    });
  }
  return names.map((n) => {
    const t = described.get(n.name);
    if (!t)
      throw new ConnectorError('NOT_FOUND', `table ${n.name} does not exist (or this user may not see it)`);
    if (t.key.length === 0) {
      throw new ConnectorError(
        'UNSUPPORTED_OPERATION',
        `table ${n.name} has no primary key: deletes and updates could not name their row; add one (ALTER TABLE ${n.name} ADD PRIMARY KEY (…))`,
      );
    }
    return t;
  });
}

/**
 * The operation's tables against the checkpoint's: a snapshot under way copies the tables it
 * started with; a table added after the initial snapshot is copied by the run that adds it
 * (snapshot: initial; docs/cdc.md "Changing the captured tables"). Answers the added names.
 */
function requireSameTables(op: CdcOperation, committed: Checkpoint | null, step: StepContext): string[] {
  if (!committed?.tables) return [];
  const before = committed.tables;
  const added = op.tables.filter((t) => !before.includes(t));
  const removed = before.filter((t) => !op.tables.includes(t));
  if (added.length === 0 && removed.length === 0) return [];
  if (committed.phase === 'snapshot') {
    throw new ConnectorError(
      'UNSUPPORTED_OPERATION',
      `the capture's tables changed while its initial snapshot was being copied (it started with ${before.join(', ')}): ` +
        'reset the step cursor to take the snapshot again with the new tables',
    );
  }
  const copied = op.snapshot === 'initial' && added.length > 0;
  step.log(
    'info',
    `the captured tables changed:${added.length ? ` added ${added.join(', ')} (${copied ? 'copied first' : 'not copied: snapshot never'})` : ''}${removed.length ? ` removed ${removed.join(', ')}` : ''}`,
  );
  return copied ? added : [];
}

/** Two snapshot windows as one: every table's chunks, until the later end. */
function mergeWindows(
  a: { until: Position; chunks: Chunks } | undefined,
  b: { until: Position; chunks: Chunks } | undefined,
) {
  if (!a || !b) return a ?? b;
  return {
    until: comparePositions(a.until, b.until) >= 0 ? a.until : b.until,
    chunks: { ...a.chunks, ...b.chunks },
  };
}

export async function readMysqlChanges(
  conn: MysqlConnection,
  step: StepContext,
  _capture: string,
  ctx: ConnectorContext,
  clock: () => number = Date.now,
): Promise<SourceOutput> {
  const op = cdcOperationOf(step);
  const signal = signalOf(step, ctx);
  const started = clock();
  const committed: Checkpoint | null = step.lowerBoundCursor ? parseCheckpoint(step.lowerBoundCursor) : null;
  const ctrl = await connectMysql(conn, { ...ctx, signal }, { readOnly: true });
  let handedOver = false;
  try {
    const facts = await serverFacts(ctrl);
    requireSettings(facts);
    const tables = await capturedTables(ctrl, op, conn.config.database, ctx);
    const { columns, index } = unionColumns(tables);
    // Each table's columns' places in the union, computed once.
    const slots = new Map(tables.map((t) => [t, t.columns.map((c) => index.get(c.name) as number)]));
    const row = (
      o: string,
      t: CapturedTable,
      value: (c: TableColumn, i: number) => unknown,
      at: string,
      when: string | null,
    ) => {
      const out: unknown[] = new Array(columns.length).fill(null);
      out[0] = o;
      out[1] = t.name;
      out[2] = at;
      out[3] = when;
      const places = slots.get(t) as number[];
      for (let i = 0; i < t.columns.length; i++) out[places[i]] = value(t.columns[i], i);
      return out;
    };
    const snapshotRow = (t: CapturedTable, values: unknown[], at: Position) =>
      row(
        'insert',
        t,
        (c, i) => (c.dataType === 'json' ? snapshotValue(values[i], c) : values[i]),
        positionText(at),
        null,
      );
    const ended = deferred<string | null>();
    const output = (batches: AsyncGenerator<unknown[][]>, next: () => Promise<Checkpoint>): SourceOutput => {
      async function* withCheckpoint(): AsyncGenerator<unknown[][]> {
        yield* batches;
        ended.resolve(checkpointText({ ...(await next()), tables: op.tables }));
      }
      return {
        payload: { kind: 'rows', columns, batches: tracked(withCheckpoint(), () => {}, ended.reject) },
        nextCursor: () => ended.promise,
      };
    };

    // First run without a snapshot: the capture starts at the server's position now.
    if (committed === null && op.snapshot === 'never') {
      const now = await currentPosition(ctrl, facts);
      await closeMysql(ctrl);
      handedOver = true;
      return output((async function* () {})(), async () => ({ phase: 'stream', at: now }));
    }

    const addedNames = requireSameTables(op, committed, step);

    if (committed === null || committed.phase === 'snapshot') {
      await closeMysql(ctrl);
      handedOver = true;
      const snapshot = await readSnapshot({
        conn,
        ctx,
        signal,
        facts,
        tables,
        state: committed,
        maxRows: op.max_changes,
        toRow: snapshotRow,
      });
      step.log('info', `snapshot of ${tables.map((t) => t.name).join(', ')}`);
      return output(snapshot.batches, async () => snapshot.next());
    }

    // The stream.
    const from = committed.at;
    requireRetained(from, await binaryLogs(ctrl));
    const added = tables.filter((t) => addedNames.includes(t.name));
    let window = committed.window;
    let until: Position = from;
    let reader: ReturnType<typeof readBinlog> | null = null;
    const startStream = async () => {
      until = await currentPosition(ctrl, facts);
      reader = readBinlog({
        ctrl,
        from,
        until,
        tables,
        maxChanges: op.max_changes,
        deadline: started + op.max_seconds * 1000,
        now: clock,
        signal,
        mapError: (err) => mysqlError(err, conn),
      });
      step.log('info', `binlog from ${positionText(from)} to ${positionText(until)}`);
    };
    // Tables new to the capture are copied first (whole, in this run), then the stream starts:
    // their changes up to the copy's position are dropped like an initial snapshot's (window).
    const copyAdded = async function* (): AsyncGenerator<unknown[][]> {
      const snapshot = await readSnapshot({
        conn,
        ctx,
        signal,
        facts,
        tables: added,
        state: { phase: 'snapshot', from, table: 0, after: null, chunks: {} },
        maxRows: Number.MAX_SAFE_INTEGER,
        toRow: snapshotRow,
      });
      yield* snapshot.batches;
      const copied = snapshot.next();
      if (copied.phase === 'stream') window = mergeWindows(window, copied.window);
      step.log('info', `snapshot of ${added.map((t) => t.name).join(', ')}, joining the capture`);
    };
    if (added.length === 0) await startStream();
    handedOver = true;
    // A payload nobody reads to its end (the run failed elsewhere) still lets go of the server.
    signal.addEventListener('abort', () => void closeMysql(ctrl), { once: true });
    const keyOf = (t: CapturedTable, image: Record<string, unknown> | null) =>
      image && t.key.length === 1 ? (image[t.key[0]] ?? null) : null;
    const wanted = (c: Change, at: Position) => {
      if (!window || comparePositions(at, window.until) > 0) return true;
      const integer = /int$/.test(c.table.columns.find((k) => k.name === c.table.key[0])?.dataType ?? '');
      const key = (image: Record<string, unknown> | null) => (integer ? keyOf(c.table, image) : null);
      if (!inSnapshot(window.chunks, c.table, key(c.values), at)) return true;
      return c.before !== null && !inSnapshot(window.chunks, c.table, key(c.before), at);
    };
    const changeRow = changeRows(tables, index, columns.length);
    async function* batches(): AsyncGenerator<unknown[][]> {
      try {
        if (added.length > 0) {
          yield* copyAdded();
          await startStream();
        }
        let batch: unknown[][] = [];
        for await (const tx of (reader as ReturnType<typeof readBinlog> | null)!.transactions) {
          const p = positionText(tx.at);
          for (const c of tx.changes) {
            if (window && !wanted(c, tx.at)) continue;
            batch.push(changeRow(c, p, tx.committedAt));
          }
          if (batch.length >= BATCH) {
            yield batch;
            batch = [];
          }
        }
        if (batch.length > 0) yield batch;
      } finally {
        await closeMysql(ctrl);
      }
    }
    const next = async (): Promise<Checkpoint> => {
      let at = (reader as ReturnType<typeof readBinlog> | null)!.position();
      if (comparePositions(at, until) === 0) at = until;
      if (at.gtid === undefined && facts.mariadb) {
        const aux = await connectMysql(conn, ctx, { readOnly: true });
        try {
          const gtid = await gtidAt(aux, facts, at);
          if (gtid !== undefined) at = { ...at, gtid };
        } finally {
          await closeMysql(aux);
        }
      }
      const keep = window && comparePositions(at, window.until) < 0;
      return keep ? { phase: 'stream', at, window } : { phase: 'stream', at };
    };
    return output(batches(), next);
  } catch (err) {
    if (err instanceof SchemaRefused) throw err.reason;
    throw err instanceof ConnectorError ? err : mysqlError(err, conn);
  } finally {
    if (!handedOver) await closeMysql(ctrl);
  }
}
