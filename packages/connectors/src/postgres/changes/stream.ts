import type pg from 'pg';
import { LogicalReplicationService, type Pgoutput, PgoutputPlugin } from 'pg-logical-replication';
import { withDeadline } from '../../relational/errors';
import { type ConnectorContext, ConnectorError } from '../../types';
import { type PgConnection, pgClientConfig, pgTypes } from '../connect';
import type { CapturedTable } from './catalog';
import type { ChangeDecoder, Decoded } from './decode';
import { compareLsn, lsnText, lsnValue } from './lsn';
import { STREAM_APPLICATION } from './session-names';
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
// A session that ended a read cleanly (at a transaction's end) may be kept, paused, for the next
// read of the same capture in this process (docs/cdc.md "The replication session"): that read
// goes on from where this one stopped instead of decoding the log again from the slot's
// restart_lsn. What the server sent after the stop waits in the session, in log order.

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
type Incoming = { lsn: string; msg: Pgoutput.Message };
/** A decoded message, or the error decoding it raised, in log order. */
type Step = Decoded | { kind: 'error'; err: unknown };

/**
 * One replication session on a capture's slot (START_REPLICATION … LOGICAL, pgoutput). A read
 * attaches to it; between reads (held) it is paused, what arrives waits in `backlog`, and the
 * committed position is sent as its status every FEEDBACK_MS so the server keeps it.
 */
export class ReplicationStream {
  /** The position the last read on this session handed out (the end of its last transaction). */
  position: string;
  /** The latest Relation message a read consumed, per relation: the next read's decoder starts from them. */
  readonly relations = new Map<number, Incoming>();
  /** Messages no read consumed yet, in log order. */
  backlog: Incoming[] = [];
  failure: { err: unknown } | null = null;
  private listener: ((lsn: string, msg: Pgoutput.Message) => void) | null = null;
  private onFailure: ((err: unknown) => void) | null = null;
  private paused = false;
  private closing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  /** The status the server hears (the library reports the position after the one it is given). */
  private status: string;

  private constructor(
    private readonly service: LogicalReplicationService,
    private readonly connection: { stream: unknown; on(event: string, fn: (...a: unknown[]) => void): void },
    readonly capture: string,
    from: string,
  ) {
    this.position = from;
    this.status = lsnText(lsnValue(from) - 1n);
    this.timer = setInterval(() => this.alive(), FEEDBACK_MS);
    this.timer.unref();
  }

  /** Opens a session streaming the capture's slot from `from` (the committed position). */
  static async open(conn: PgConnection, ctx: ConnectorContext, capture: string, from: string) {
    const { config, connection } = await pgClientConfig(conn, ctx, {
      replication: true,
      applicationName: STREAM_APPLICATION,
    });
    // No acknowledgement of what is read, ever: only the status below.
    const service = new LogicalReplicationService(config, {
      acknowledge: { auto: false, timeoutSeconds: 0 },
    });
    const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [capture], messages: true });
    const s = new ReplicationStream(service, connection as never, capture, from);
    // Called synchronously for each message as the library parses it, in log order. A Relation
    // message sets the value parsers the library uses for the table's next messages, so it is
    // given them here, whether or not a read is attached.
    service.on('data', (lsn: string, msg: Pgoutput.Message) => {
      if (msg.tag === 'relation') {
        for (const c of msg.columns) c.parser = pgTypes.getTypeParser(c.typeOid) as (raw: any) => any;
      }
      if (s.listener) s.listener(lsn, msg);
      else s.backlog.push({ lsn, msg });
    });
    // Sent as the stream starts, the status moves the slot to the committed position
    // (docs/cdc.md "How it works", step 1); then again to keep the session alive.
    service.on('start', () => s.alive());
    service.on('heartbeat', (_lsn: string, _time: number, reply: boolean) => {
      if (reply) s.alive();
    });
    service.on('error', (err: unknown) => s.fail(err));
    service.subscribe(plugin, capture, from).then(
      () => s.fail(new ConnectorError('CONNECTION_FAILED', 'the server ended the replication stream early')),
      (err) => s.fail(err),
    );
    return s;
  }

  private alive() {
    if (this.failure || this.closing) return;
    this.service.acknowledge(this.status).catch(() => {});
  }

  private fail(err: unknown) {
    if (this.failure || this.closing) return;
    this.failure = { err };
    this.onFailure?.(err);
  }

  /** The server process of the session (pg_replication_slots.active_pid while it streams). */
  pid(): number | null {
    const client = (this.service as unknown as { _client?: { processID?: number } | null })._client;
    return client?.processID ?? null;
  }

  /** The committed position becomes the status the server hears, at once. */
  confirm(committed: string) {
    this.status = lsnText(lsnValue(committed) - 1n);
    this.alive();
  }

  /** A read takes the messages: first the backlog, then as they arrive. */
  attach(listener: (lsn: string, msg: Pgoutput.Message) => void, onFailure: (err: unknown) => void) {
    this.onFailure = onFailure;
    this.listener = listener;
    const waiting = this.backlog;
    this.backlog = [];
    for (let i = 0; i < waiting.length; i++) {
      if (this.listener !== listener) {
        this.backlog = [...waiting.slice(i), ...this.backlog];
        break;
      }
      listener(waiting[i].lsn, waiting[i].msg);
    }
    if (this.failure) onFailure(this.failure.err);
  }

  /** The read is over: what arrives waits in the backlog (`unread` first, in front of it). */
  detach(unread: Incoming[] = []) {
    this.listener = null;
    this.onFailure = null;
    this.backlog = [...unread, ...this.backlog];
  }

  pause(want: boolean) {
    if (want === this.paused || this.closing) return;
    const socket = this.connection.stream as Socket;
    if (want) socket.pause();
    else socket.resume();
    this.paused = want;
  }

  /** Ends the session (at most about a second); never throws. */
  close(): Promise<void> {
    if (!this.closing) {
      clearInterval(this.timer);
      this.listener = null;
      this.onFailure = null;
      // The end of the session is read from the socket: it must flow again.
      if (this.paused) (this.connection.stream as Socket).resume();
      this.paused = false;
      const socket = () => (this.connection.stream as Socket).destroy();
      this.closing = withDeadline(
        this.service.destroy().then(() => {}),
        1000,
        socket,
        () => new ConnectorError('TIMEOUT', 'close timed out'),
      )
        .catch(() => {})
        .then(() => {
          // The library took its listeners off the connection: a late socket error goes nowhere.
          this.connection.on('error', () => {});
        });
    }
    return this.closing;
  }
}

/**
 * `client` is the run's SQL session (not the replication one): `onShape` may ask the catalog
 * there while the stream runs, and after a stream that is not kept it waits there until the
 * server let go of the slot, so the next statement on the slot finds it free. `reuse` is a held
 * session whose position is `b.from` (the caller checked); otherwise a new one is opened.
 * `kept()` answers the session after a clean end (at a transaction's end, its position the
 * read's), paused, for the caller to hold or close; null when it was closed.
 */
export function streamChanges(
  conn: PgConnection,
  ctx: ConnectorContext,
  client: pg.Client,
  decoder: ChangeDecoder,
  b: StreamBounds,
  reuse: ReplicationStream | null = null,
) {
  let position = b.from;
  let keep: ReplicationStream | null = null;

  async function* batches(): AsyncGenerator<unknown[][]> {
    // A replay of a read that handed on nothing.
    if (b.replay && compareLsn(b.upto, b.from) <= 0) {
      if (reuse) await reuse.close();
      return;
    }
    const stream = reuse ?? (await ReplicationStream.open(conn, ctx, b.capture, b.from));
    if (reuse) stream.confirm(b.from);

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

    // The socket is paused while the consumer is behind, a shape is being checked, or the read is over.
    let behind = false;
    let checking: Promise<void> | null = null;
    const flow = () => stream.pause(done || behind || checking !== null);

    // Messages decoded while a shape is checked wait here, in order: the check comes before
    // the table's next change, and nothing after it is handed on (or decides where the read
    // stops) until the check answered. A refusal ends the read with the check's error.
    let held: { d: Step; lsn: string; msg: Pgoutput.Message }[] = [];
    const take = (d: Step, lsn: string, msg: Pgoutput.Message) => {
      if (msg.tag === 'relation') stream.relations.set(msg.relationOid, { lsn, msg });
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
        if (stopAt(d.endLsn)) {
          end();
          flow();
        }
      }
    };
    const release = () => {
      let i = 0;
      while (i < held.length && !done && checking === null) {
        const h = held[i++];
        take(h.d, h.lsn, h.msg);
      }
      held = held.slice(i);
      flow();
    };
    const decode = (lsn: string, msg: Pgoutput.Message): Step => {
      try {
        return decoder.decode(lsn, msg);
      } catch (err) {
        return { kind: 'error', err };
      }
    };
    const onMessage = (lsn: string, msg: Pgoutput.Message) => {
      if (done) {
        unread.push({ lsn, msg });
        return;
      }
      const d = decode(lsn, msg);
      if (checking !== null || held.length > 0) held.push({ d, lsn, msg });
      else take(d, lsn, msg);
    };
    // What came after the read's end: the next read's, in log order.
    const unread: Incoming[] = [];
    const abort = () => end(new ConnectorError('TIMEOUT', 'the run was canceled'));
    b.signal.addEventListener('abort', abort, { once: true });
    if (b.signal.aborted) abort();
    // A kept session's decoder starts from the tables' shapes the stream described last.
    if (reuse) for (const r of [...stream.relations.values()]) onMessage(r.lsn, r.msg);
    stream.attach(onMessage, (err) => end(err));
    // A kept session was paused between the reads.
    flow();
    let clean = false;
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
      clean = !failed && !b.signal.aborted && stream.failure === null;
    } finally {
      b.signal.removeEventListener('abort', abort);
      done = true;
      stream.detach([...held.map(({ lsn, msg }) => ({ lsn, msg })), ...unread]);
      // Only a read that stopped at a transaction's end, with its shape checks answered, is
      // where the next read can go on: a replay ends where a former attempt did, not here.
      if (clean && !b.replay && lastCommit !== null && checking === null) {
        stream.pause(true);
        keep = stream;
      } else {
        await stream.close();
        if (!b.signal.aborted) {
          // A check still asking the catalog on `client` ends before the session is used again.
          await (checking as Promise<void> | null)?.catch(() => {});
          await waitReleased(client, b.capture).catch(() => false);
        }
      }
    }
    // A replay reads exactly to `upto`. Otherwise the position is the end of the last
    // transaction decoded: the start marker's when the read got there (on a quiet database
    // that moves the position over everything else the server wrote), else the last one
    // handed on. Never a position merely read from the server: a commit not yet flushed
    // before it would be skipped.
    const reached = b.replay ? b.upto : (lastCommit ?? b.from);
    position = compareLsn(reached, b.from) > 0 ? reached : b.from;
    if (keep) keep.position = position;
  }
  return { batches: batches(), position: () => position, kept: () => keep };
}
