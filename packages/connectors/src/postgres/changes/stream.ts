import type pg from 'pg';
import { LogicalReplicationService, type Pgoutput, PgoutputPlugin } from 'pg-logical-replication';
import { withDeadline } from '../../relational/errors';
import { type ConnectorContext, ConnectorError } from '../../types';
import { type PgConnection, pgClientConfig } from '../connect';
import type { CapturedTable } from './catalog';
import type { ChangeDecoder, Decoded } from './decode';
import { compareLsn, lsnText, lsnValue } from './lsn';
import { waitReleased } from './slot';

// The changes of one run (docs/cdc.md "How it works"): the slot's changes from its confirmed
// position up to this read's start marker, streamed over a replication session
// (START_REPLICATION … LOGICAL with pgoutput, through pg-logical-replication). The server
// decodes while the rows are handed on; the socket is paused while the consumer is behind, and
// while a table's new shape is being checked (docs/cdc.md "Schema changes").
// The session confirms nothing past the committed position the slot already has: the slot
// moves only at the start of a later read, to a position a run committed. Decoded rows leave
// in batches as they come; the run stops after a whole transaction once it has `maxChanges`
// changes or its time is up.

const BATCH = 5000;
/** Batches decoded ahead of the consumer before the socket is paused. */
const AHEAD = 4;
/** How often the session tells the server it is alive (well under wal_sender_timeout). */
const FEEDBACK_MS = 10_000;

export type StreamBounds = {
  capture: string;
  from: string;
  /** A log position at or after the start marker's commit (or, replaying, the position to reach). */
  upto: string;
  /** Replaying a former attempt: no count or time bound; the read ends at `upto`. */
  replay: boolean;
  /** The content of this read's start marker: the read ends with its transaction. */
  marker: string | null;
  maxChanges: number;
  timeUp(): boolean;
  signal: AbortSignal;
  /** A table came with a shape other than the catalog's at the start (before its next change). */
  onShape?(table: CapturedTable): Promise<void>;
};

type Socket = { pause(): void; resume(): void; destroy(): void };
/** A decoded message, or the error decoding it raised, in log order. */
type Step = Decoded | { kind: 'error'; err: unknown };

/**
 * `client` is the run's SQL session (not the replication one): `onShape` may ask the catalog
 * there while the stream runs, and after the stream it waits there until the server let go of
 * the slot, so the next statement on the slot finds it free.
 */
export function streamChanges(
  conn: PgConnection,
  ctx: ConnectorContext,
  client: pg.Client,
  decoder: ChangeDecoder,
  b: StreamBounds,
) {
  let position = b.from;

  async function* batches(): AsyncGenerator<unknown[][]> {
    // A replay of a read that handed on nothing.
    if (b.replay && compareLsn(b.upto, b.from) <= 0) return;
    const { config, connection } = await pgClientConfig(conn, ctx, { replication: true });
    const socket = () => connection.stream as unknown as Socket;
    // No acknowledgement of what is read, ever: only the status below.
    const service = new LogicalReplicationService(config, {
      acknowledge: { auto: false, timeoutSeconds: 0 },
    });
    const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [b.capture], messages: true });

    const ready: unknown[][][] = [];
    let pending: unknown[][] = [];
    let changes = 0;
    let lastCommit: string | null = null;
    let inMarker = false;
    let done = false;
    let failed = null as { err: unknown } | null;
    let wake: (() => void) | null = null;
    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const end = (err?: unknown) => {
      if (done) return;
      done = true;
      if (err !== undefined) failed = { err };
      if (pending.length > 0) ready.push(pending);
      pending = [];
      notify();
    };
    const stopAt = (endLsn: string) =>
      inMarker || compareLsn(endLsn, b.upto) >= 0 || (!b.replay && (changes >= b.maxChanges || b.timeUp()));

    // The socket is paused while the consumer is behind or a shape is being checked.
    let paused = false;
    let behind = false;
    let checking: Promise<void> | null = null;
    const flow = () => {
      const want = !done && (behind || checking !== null);
      if (want && !paused) socket().pause();
      else if (!want && paused) socket().resume();
      paused = want;
    };

    // Messages decoded while a shape is checked wait here, in order: the check comes before
    // the table's next change, and nothing after it is handed on (or decides where the read
    // stops) until the check answered. A refusal ends the read with the check's error.
    let held: Step[] = [];
    const take = (d: Step) => {
      if (d.kind === 'error') {
        end(d.err);
      } else if (d.kind === 'rows') {
        for (const row of d.rows) pending.push(row);
        changes += d.rows.length;
        if (pending.length >= BATCH) {
          ready.push(pending);
          pending = [];
          notify();
          if (ready.length >= AHEAD) {
            behind = true;
            flow();
          }
        }
      } else if (d.kind === 'shape') {
        if (!b.onShape) return;
        checking = b.onShape(d.table).then(
          () => {
            checking = null;
            release();
          },
          (err) => {
            checking = null;
            end(err);
          },
        );
        flow();
      } else if (d.kind === 'marker') {
        inMarker = b.marker !== null && d.content === b.marker;
      } else if (d.kind === 'commit') {
        lastCommit = d.endLsn;
        if (stopAt(d.endLsn)) end();
      }
    };
    const release = () => {
      let i = 0;
      while (i < held.length && !done && checking === null) take(held[i++]);
      held = held.slice(i);
      flow();
    };

    // Called synchronously for each message as the library parses it, in log order. Decoding
    // happens here even while a shape is checked: a Relation message sets the value parsers the
    // library uses for the next message.
    service.on('data', (lsn: string, msg: Pgoutput.Message) => {
      if (done) return;
      let d: Step;
      try {
        d = decoder.decode(lsn, msg);
      } catch (err) {
        d = { kind: 'error', err };
      }
      if (checking !== null || held.length > 0) held.push(d);
      else take(d);
    });
    // The status the server hears: the committed position as received, flushed and applied,
    // never a position this read got to. Sent as the stream starts, it moves the slot there
    // (docs/cdc.md "How it works", step 1); then again to keep the session alive. The library
    // reports the position after the one it is given.
    const committed = lsnText(lsnValue(b.from) - 1n);
    const alive = () => {
      service.acknowledge(committed).catch(() => {});
    };
    service.on('start', alive);
    service.on('heartbeat', (_lsn: string, _time: number, reply: boolean) => {
      if (reply) alive();
    });
    service.on('error', (err: unknown) => end(err));
    const abort = () => end(new ConnectorError('TIMEOUT', 'the run was canceled'));
    b.signal.addEventListener('abort', abort, { once: true });
    if (b.signal.aborted) abort();
    service.subscribe(plugin, b.capture, b.from).then(
      () => end(new ConnectorError('CONNECTION_FAILED', 'the server ended the replication stream early')),
      (err) => end(err),
    );
    const timer = setInterval(alive, FEEDBACK_MS);
    try {
      for (;;) {
        if (failed) throw failed.err;
        const batch = ready.shift();
        if (batch) {
          if (behind && ready.length <= 1) {
            behind = false;
            flow();
          }
          yield batch;
          continue;
        }
        if (done) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      clearInterval(timer);
      b.signal.removeEventListener('abort', abort);
      done = true;
      // The end of the session is read from the socket: it must flow again.
      if (paused) socket().resume();
      paused = false;
      await withDeadline(
        service.destroy(),
        1000,
        () => socket().destroy(),
        () => new ConnectorError('TIMEOUT', 'close timed out'),
      ).catch(() => {});
      // The library took its listeners off the connection: a late socket error goes nowhere.
      connection.on('error', () => {});
      if (!b.signal.aborted) {
        // A check still asking the catalog on `client` ends before the session is used again.
        await (checking as Promise<void> | null)?.catch(() => {});
        await waitReleased(client, b.capture).catch(() => false);
      }
    }
    // A replay reads exactly to `upto`. Otherwise the position is the end of the last
    // transaction decoded: the start marker's when the read got there (on a quiet database
    // that moves the position over everything else the server wrote), else the last one
    // handed on. Never a position merely read from the server: a commit not yet flushed
    // before it would be skipped.
    const reached = b.replay ? b.upto : (lastCommit ?? b.from);
    position = compareLsn(reached, b.from) > 0 ? reached : b.from;
  }
  return { batches: batches(), position: () => position };
}
