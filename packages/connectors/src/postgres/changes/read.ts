import { randomUUID } from 'node:crypto';
import type { CdcOperation, SourceOutput, StepContext } from '@sluice/engine';
import { deferred, tracked } from '../../payloads/streams';
import { signalOf } from '../../relational/pipeline';
import { sessionKey } from '../../session-pool';
import { type ConnectorContext, ConnectorError } from '../../types';
import type { PgConnection } from '../connect';
import { openPgSession } from '../session';
import { addedTables, copyAddedTables } from './added';
import { type CapturedTable, capturedSchemaOf, describeTables, rowShape, sameColumns } from './catalog';
import { tableFindings } from './check';
import { type CaptureCursor, decodeCursor, encodeCursor, type SnapshotProgress } from './cursor';
import { ChangeDecoder } from './decode';
import { compareLsn } from './lsn';
import { endMarker, findEndMarker, writeMarker } from './markers';
import { checkCaptureName, createSlot, dropSlot, ensurePublication, slotState, waitReleased } from './slot';
import { copyTables } from './snapshot';
import { type ReplicationStream, streamChanges } from './stream';
import { lockCapture, takeOver, unlockCapture } from './take-over';

// A cdc source step on PostgreSQL (docs/cdc.md): one run is either a part of the initial
// snapshot or the changes since the committed position, as rows of the changes contract
// (connectors/src/types.ts ChangesCapability). The slot moves only to a committed position,
// at the start of the next read.

/**
 * How long a replication session a read ended cleanly is kept, paused, for the next read of the
 * capture in this worker process (docs/cdc.md "The replication session").
 */
export const HOLD_IDLE_MS = 60_000;

const lost = (capture: string, why: string) =>
  new ConnectorError(
    'REMOTE_ERROR',
    `replication slot ${capture} ${why}: changes since the committed position may be lost; reset the pipeline's checkpoints to take a new snapshot`,
  );

export async function readPgChanges(
  conn: PgConnection,
  step: StepContext,
  capture: string,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const operation = step.step.operation;
  if (operation.operation_type !== 'cdc') {
    throw new ConnectorError('UNSUPPORTED_OPERATION', `step ${step.step.slug} is not a cdc operation`);
  }
  const op: CdcOperation = operation;
  checkCaptureName(capture);
  const started = Date.now();
  const timeUp = () => Date.now() - started >= op.max_seconds * 1000;
  // The replication session a former read of this capture left in this process (docs/cdc.md
  // "The replication session"), under a key that also names the connection it was opened with.
  const heldKey = ctx.sessions
    ? `${sessionKey({ type: 'postgres', config: conn.config, credentials: conn.credentials, readOnly: false, policy: ctx.policy })}:${capture}`
    : null;
  let reuse: ReplicationStream | null = null;
  const session = await openPgSession(conn, ctx, signalOf(step, ctx));
  const { client, timed } = session;
  let plan: Awaited<ReturnType<typeof planRead>>;
  // The server's answer to the schema seen (a broken contract) is rethrown as it is.
  let stopped = null as { err: unknown } | null;
  try {
    plan = await timed(planRead());
  } catch (err) {
    await (reuse as ReplicationStream | null)?.close();
    await session.close();
    throw stopped ? stopped.err : session.error(err);
  }

  async function planRead() {
    // Every read holds the capture's lock from here until its session ends: a session on the
    // slot while nobody holds it is one a read has left idle, which another read may end.
    const locked = await lockCapture(client, capture);
    reuse = heldKey ? ctx.sessions!.take<ReplicationStream>(heldKey) : null;
    const tables = await describeTables(client, op.tables);
    try {
      await ctx.onCapturedSchema?.(capturedSchemaOf(tables));
    } catch (err) {
      stopped = { err };
      throw err;
    }
    const refused = tables.flatMap(tableFindings);
    if (refused.length > 0) throw new ConnectorError('INVALID_STATEMENT', refused[0].message);
    const shape = rowShape(tables);
    const committed = step.lowerBoundCursor ? decodeCursor(step.lowerBoundCursor) : null;
    if (committed?.snapshot && committed.tables.join('\n') !== op.tables.join('\n')) {
      throw new ConnectorError(
        'INVALID_STATEMENT',
        "the captured tables changed during the initial snapshot; reset the pipeline's checkpoints to take a new snapshot",
      );
    }
    // The held session goes on only from the position it handed out, and only when that is the
    // committed one (a failed run, a retried attempt or a reset leaves another checkpoint), and
    // only while the server says it still holds the slot (a restart ends it without a word
    // reaching the paused socket).
    let slot = await slotState(client, capture);
    const held = reuse;
    const goesOn =
      locked &&
      held !== null &&
      held.failure === null &&
      slot?.pid != null &&
      held.pid() === slot.pid &&
      (ctx.attempt ?? 1) === 1 &&
      committed !== null &&
      committed.snapshot === null &&
      committed.tables.join('\n') === op.tables.join('\n') &&
      compareLsn(committed.lsn, held.position) === 0;
    if (held && !goesOn) {
      reuse = null;
      await held.close();
    }
    if (slot?.active && !reuse) {
      if (await takeOver(client, capture, locked)) slot = await slotState(client, capture);
      if (slot?.active)
        throw new ConnectorError('REMOTE_ERROR', `replication slot ${capture} is in use by another session`);
    }
    // A later attempt of a run repeats what the lost attempt handed on, if it got that far.
    const replayText =
      (ctx.attempt ?? 1) > 1 && slot ? await findEndMarker(client, capture, step.runSlug) : null;
    const replay = replayText ? decodeCursor(replayText) : null;
    // A new capture's slot is created here, before anything is handed on: creating it waits
    // for every transaction open on the server to end, a sink's on the same server included.
    const created = committed === null && replay === null ? await newCapture(tables, slot !== null) : null;
    return { tables, shape, committed, slot, replay, replayText, created };
  }

  /** Nothing was committed: whatever slot a failed run left behind is thrown away. */
  async function newCapture(tables: CapturedTable[], slotExists: boolean) {
    if (slotExists) await dropSlot(client, capture);
    await ensurePublication(client, capture, tables);
    const created = await createSlot(conn, ctx, capture);
    try {
      if (op.snapshot === 'initial') {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        await created.importInto(client);
      }
    } finally {
      await created.close();
    }
    return { start: created.consistentPoint, imported: op.snapshot === 'initial' };
  }

  const { tables, shape, committed, slot, replay, replayText, created } = plan;
  const ended = deferred<string | null>();
  let next: string | null = null;

  async function* run(): AsyncGenerator<unknown[][]> {
    try {
      if (committed === null || committed.snapshot !== null) yield* snapshotRun(committed);
      else yield* changesRun(committed);
    } catch (err) {
      throw stopped ? stopped.err : session.error(err);
    } finally {
      await reuse?.close();
      await unlockCapture(client, capture);
      await session.close();
    }
  }

  async function* snapshotRun(from: CaptureCursor | null): AsyncGenerator<unknown[][]> {
    let start: string;
    if (!created) {
      if (!slot) throw lost(capture, 'no longer exists');
      start = (from ?? replay)!.start;
    } else {
      start = created.start;
    }
    const imported = created?.imported === true;
    const fresh = created !== null;
    const base = { v: 1 as const, tables: op.tables, start };
    if (fresh && op.snapshot === 'never') {
      next = encodeCursor({ ...base, snapshot: null, lsn: start });
      await finish();
      return;
    }
    if (!imported) await timed(client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'));
    const at = await timed(
      client.query<{ t: string }>(
        `SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t`,
      ),
    );
    const fromProgress: SnapshotProgress = from?.snapshot ?? { table: 0, key: null };
    const copy = copyTables(
      client,
      tables,
      shape,
      { position: start, committedAt: at.rows[0].t },
      {
        from: fromProgress,
        to: replay ? replay.snapshot : null,
        budget: replay ? Number.POSITIVE_INFINITY : op.max_changes,
        timeUp,
      },
    );
    yield* copy.batches;
    await timed(client.query('COMMIT'));
    next = replayText ?? encodeCursor({ ...base, snapshot: copy.progress(), lsn: start });
    await finish();
  }

  async function* changesRun(from: CaptureCursor): AsyncGenerator<unknown[][]> {
    if (!slot) throw lost(capture, 'no longer exists');
    if (slot.confirmed && compareLsn(slot.confirmed, from.lsn) > 0) {
      throw lost(capture, `is at ${slot.confirmed}, past the committed position ${from.lsn}`);
    }
    // The slot moves to the committed position when the stream starts (stream.ts): a separate
    // pg_replication_slot_advance would decode the log from restart_lsn once more.

    // Every run: the publication follows the tables and publishes truncates (an older one did not).
    // A table the position covers must still be published (slot.ts ensurePublication).
    const covered = tables.filter((t) => from.tables.includes(t.name));
    const { truncates } = await timed(ensurePublication(client, capture, tables, covered));
    if (!truncates)
      step.log(
        'warn',
        `publication ${capture} does not publish truncates: a TRUNCATE of a captured table is not seen`,
      );
    if (from.tables.join('\n') !== op.tables.join('\n')) {
      // A table new to the capture gets its initial snapshot now (docs/cdc.md "Changing the captured tables").
      const added = addedTables(from, tables);
      const copied = op.snapshot === 'initial' && added.length > 0;
      step.log(
        'info',
        `the captured tables changed: changes of ${op.tables.join(', ')} are read from now on${
          added.length > 0
            ? `; ${added.map((t) => t.name).join(', ')} ${copied ? 'copied first' : 'not copied (snapshot: never)'}`
            : ''
        }`,
      );
      if (copied) yield* copyAddedTables(client, added, shape);
    }
    let marker: string | null = null;
    let upto: string;
    if (replay) {
      upto = replay.lsn;
    } else {
      marker = JSON.stringify({ start: { capture, run: step.runSlug, id: randomUUID() } });
      await timed(writeMarker(client, marker));
      const r = await timed(
        client.query<{ l: string }>('SELECT pg_catalog.pg_current_wal_insert_lsn()::text AS l'),
      );
      upto = r.rows[0].l;
    }
    const decoder = new ChangeDecoder(tables, shape, step.log);
    // A table whose shape in the stream is not the catalog's at the start: an older shape
    // (changes logged before a DDL the start already reported), or a DDL committed during the
    // run. The catalog tells which; a change during the run is reported like one between runs,
    // and a broken contract stops the read before the sinks commit (docs/cdc.md "Schema changes").
    let described = tables;
    const onShape = async () => {
      const now = await describeTables(client, op.tables);
      if (sameColumns(now, described)) return;
      described = now;
      step.log(
        'warn',
        'the captured tables changed during the run: the new shape is checked against the contract',
      );
      try {
        await ctx.onCapturedSchema?.(capturedSchemaOf(now));
      } catch (err) {
        stopped = { err };
        throw err;
      }
    };
    const stream = reuse;
    reuse = null;
    const changes = streamChanges(
      conn,
      ctx,
      client,
      decoder,
      {
        signal: signalOf(step, ctx),
        capture,
        from: from.lsn,
        upto,
        replay: replay !== null,
        marker,
        maxChanges: op.max_changes,
        timeUp,
        onShape,
      },
      stream,
    );
    yield* changes.batches;
    const kept = changes.kept();
    if (kept && heldKey) ctx.sessions!.hold(heldKey, kept, HOLD_IDLE_MS);
    else if (kept) {
      await kept.close();
      await timed(waitReleased(client, capture));
    }
    next = replayText ?? encodeCursor({ ...from, tables: op.tables, lsn: changes.position() });
    await finish();
  }

  /** Before the last row is handed on (so before any sink commits): the end marker. */
  async function finish() {
    if (replay || next === null) return;
    await timed(writeMarker(client, endMarker({ capture, run: step.runSlug, cursor: next })));
  }

  return {
    payload: {
      kind: 'rows',
      columns: shape.columns,
      batches: tracked(run(), () => ended.resolve(next), ended.reject),
    },
    nextCursor: () => ended.promise,
  };
}
