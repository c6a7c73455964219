import { createHash } from 'node:crypto';
import type { EgressPolicy } from './egress';

// Data sessions kept open between pipeline runs of one worker process. Opening a PostgreSQL or
// MySQL session costs a DNS check, a TCP (and TLS) handshake, authentication and a backend
// process on the server: more than a trivial run's own work. A session goes back to the pool only
// when it ended cleanly (no error, no open transaction) and its kind's reset (DISCARD ALL,
// COM_RESET_CONNECTION) succeeded, so the next run starts from the same state as a new session.
//
// Sessions are keyed by a hash of everything that shaped them: the connector's config, the
// decrypted credentials, the read-only flag and the egress policy. The key is a SHA-256 digest,
// so no secret is kept in a map key or ever printed. A reused session skips the egress check of
// the host's addresses at connect: they were checked when it was opened, and maxAgeMs bounds how
// long that check stands.

export type SessionKind<T> = {
  /** Opens a new session (egress check, connect, session settings). */
  open(): Promise<T>;
  /** Brings a session that ended cleanly back to a new session's state; throws if it cannot. */
  reset(session: T): Promise<void>;
  /** Ends the session; never throws. */
  close(session: T): Promise<void>;
  /** Calls back once when the server or the network ends the session (watched while idle). */
  onGone(session: T, gone: () => void): void;
};

export type SessionLease<T> = {
  session: T;
  /** True when the session came from the pool rather than being opened for this lease. */
  reused: boolean;
  /**
   * Hands the session back: kept for reuse when `reusable` (once its reset succeeded: the reset
   * goes on after this resolves), else closed.
   */
  release(reusable: boolean): Promise<void>;
};

export type SessionPoolOptions = {
  /** Idle sessions kept across all keys (the oldest is closed beyond it). */
  maxIdle: number;
  /**
   * An idle session is closed after this long (2 min): the sessions a burst of runs opened stay
   * through a quiet spell, so the next burst does not wait for new backends on the data source's
   * server (a new PostgreSQL backend's first statements load its catalog caches: 100–300 ms each
   * while a dozen start at once on 2 cores, docs/benchmarks.md "Warm pools"). Bounded by maxIdle.
   */
  idleMs?: number;
  /** A session is not reused once this old (5 min). */
  maxAgeMs?: number;
};

export type SessionPoolStats = { opened: number; reused: number; closed: number; idle: number };

/** Something a run leaves open for the next run of this process (one per key). */
export type Held = {
  /** Ends it; never throws. */
  close(): Promise<void>;
};

export type SessionPool = {
  /**
   * A session of this identity: an idle one, one being reset or opened by `warm` (waited for),
   * or a new one. `signal` ends those waits: the new session's open then meets the abort.
   */
  acquire<T>(identity: SessionIdentity, kind: SessionKind<T>, signal?: AbortSignal): Promise<SessionLease<T>>;
  /**
   * Opens a session of this identity in the background, into the idle sessions, unless one is
   * idle, being reset or opening already: a run asks for its sink's session this way while its
   * source opens, and the sink's `acquire` takes it (or waits for its open). Never throws: when
   * the open times out, the acquires that waited for it fail with its error (a server that does
   * not answer is not waited for twice); after any other failure they open their own.
   */
  warm<T>(identity: SessionIdentity, kind: SessionKind<T>): void;
  /**
   * Keeps `held` under `key` until `take` hands it out, `idleMs` pass or the pool closes (then
   * it is closed). One per key: an older one under the same key is closed.
   */
  hold(key: string, held: Held, idleMs: number): void;
  /** What is held under `key` (no longer held afterwards), or null. */
  take<T extends Held>(key: string): T | null;
  stats(): SessionPoolStats;
  /** Closes the idle sessions and what is held; sessions still leased are closed when they come back. */
  close(): Promise<void>;
};

/** What a session is opened with; only its digest is kept. */
export type SessionIdentity = {
  type: string;
  config: unknown;
  credentials: unknown;
  readOnly: boolean;
  policy: EgressPolicy;
};

type Entry = {
  key: string;
  session: unknown;
  kind: SessionKind<unknown>;
  born: number;
  idleSince: number;
  idle: boolean;
  timer: NodeJS.Timeout | null;
  gone: boolean;
};

/** JSON with sorted keys, so the same config always hashes the same. */
function stable(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  const keys = Object.keys(value as object).sort();
  return `{${keys
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${stable((value as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

// A custom resolver (tests, operators) is part of the policy: sessions opened through different
// resolvers are not interchangeable. Functions are told apart by identity.
const resolverIds = new WeakMap<object, number>();
let nextResolverId = 1;
function resolverId(fn: unknown): number {
  if (typeof fn !== 'function') return 0;
  let id = resolverIds.get(fn);
  if (id === undefined) {
    id = nextResolverId++;
    resolverIds.set(fn, id);
  }
  return id;
}

export function sessionKey(identity: SessionIdentity): string {
  const { policy } = identity;
  return createHash('sha256')
    .update(
      stable({
        type: identity.type,
        config: identity.config,
        credentials: identity.credentials,
        readOnly: identity.readOnly,
        policy: {
          allowPrivate: policy.allowPrivate,
          allowCidrs: policy.allowCidrs ?? [],
          lookup: resolverId(policy.lookup),
        },
      }),
    )
    .digest('hex');
}

/** Whether a warm open failed for want of an answer (a ConnectorError `TIMEOUT`). */
const timedOut = (outcome: { failure: unknown } | null) =>
  (outcome?.failure as { code?: unknown } | undefined)?.code === 'TIMEOUT';

/** `work`, or undefined once `signal` aborts first; the abort listener goes when either settles. */
async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (!signal) return work;
  let stop = () => {};
  const aborted = new Promise<undefined>((resolve) => {
    const on = () => resolve(undefined);
    signal.addEventListener('abort', on, { once: true });
    stop = () => signal.removeEventListener('abort', on);
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    stop();
  }
}

/** How long a reset may take before the session is dropped instead. */
const RESET_TIMEOUT_MS = 2000;

export function createSessionPool(opts: SessionPoolOptions): SessionPool {
  const idleMs = opts.idleMs ?? 2 * 60_000;
  const maxAgeMs = opts.maxAgeMs ?? 5 * 60_000;
  // Idle entries per key, most recently returned last; `order` is every idle entry by return time.
  const idle = new Map<string, Entry[]>();
  const order = new Set<Entry>();
  // Resets under way per key: a run hands its session back without waiting for the reset (a
  // round trip), and an acquire of the same key waits for one rather than opening a new session.
  const resetting = new Map<string, Set<Promise<void>>>();
  // Opens under way by `warm`, one per key: an acquire of the key waits for it too. Each settles
  // with the open's failure, or null.
  const opening = new Map<string, Promise<{ failure: unknown } | null>>();
  let closed = false;
  const counts = { opened: 0, reused: 0, closed: 0 };
  const held = new Map<string, { held: Held; timer: NodeJS.Timeout }>();
  const takeHeld = (key: string): Held | null => {
    const h = held.get(key);
    if (!h) return null;
    held.delete(key);
    clearTimeout(h.timer);
    return h.held;
  };

  const unidle = (e: Entry) => {
    e.idle = false;
    if (e.timer) clearTimeout(e.timer);
    e.timer = null;
    order.delete(e);
    const list = idle.get(e.key);
    if (!list) return;
    const i = list.indexOf(e);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) idle.delete(e.key);
  };
  const drop = async (e: Entry) => {
    if (e.idle) unidle(e);
    counts.closed++;
    await e.kind.close(e.session).catch(() => {});
  };
  const usable = (e: Entry) => !e.gone && Date.now() - e.born < maxAgeMs;
  /** A session just opened, watched for its end by the server or the network. */
  const entryOf = (key: string, session: unknown, kind: SessionKind<unknown>): Entry => {
    counts.opened++;
    const e: Entry = {
      key,
      session,
      kind,
      born: Date.now(),
      idleSince: 0,
      idle: false,
      timer: null,
      gone: false,
    };
    kind.onGone(session, () => {
      e.gone = true;
      if (e.idle) void drop(e);
    });
    return e;
  };
  /** Puts a session among the idle ones, until `idleMs` pass or the bound pushes it out. */
  const park = async (e: Entry) => {
    e.idle = true;
    e.idleSince = Date.now();
    const same = idle.get(e.key) ?? [];
    same.push(e);
    idle.set(e.key, same);
    order.add(e);
    e.timer = setTimeout(() => void drop(e), idleMs);
    e.timer.unref();
    // Over the bound: the session idle the longest goes.
    while (order.size > opts.maxIdle) {
      const oldest = order.values().next().value as Entry;
      await drop(oldest);
    }
  };

  return {
    async acquire<T>(
      identity: SessionIdentity,
      kind: SessionKind<T>,
      signal?: AbortSignal,
    ): Promise<SessionLease<T>> {
      const key = sessionKey(identity);
      let entry: Entry | null = null;
      for (;;) {
        const list = idle.get(key);
        while (!closed && list && list.length > 0) {
          const e = list[list.length - 1];
          unidle(e);
          if (usable(e)) {
            entry = e;
            break;
          }
          void drop(e);
        }
        const pending = resetting.get(key);
        const warming = opening.get(key);
        if (entry || closed || (!pending && !warming) || signal?.aborted) break;
        // A session of this key is being reset (idle within a round trip) or opened ahead by
        // `warm` (sooner than one opened now).
        const waited = await unlessAborted(
          Promise.race([...(pending ?? []), ...(warming ? [warming.then((w) => ({ warm: w }))] : [])]),
          signal,
        );
        // A warm open that timed out is not waited for twice; after any other failure (a refused
        // or dropped connection) this acquire opens its own.
        if (waited && 'warm' in waited && timedOut(waited.warm)) throw waited.warm!.failure;
      }
      const reused = entry !== null;
      if (entry) counts.reused++;
      else entry = entryOf(key, await kind.open(), kind as SessionKind<unknown>);
      const e = entry;
      let released = false;
      return {
        session: e.session as T,
        reused,
        async release(reusable) {
          if (released) return;
          released = true;
          const keep = reusable && !closed && !e.gone && Date.now() - e.born < maxAgeMs;
          if (!keep) return drop(e);
          // The reset goes on after release returns; the session is idle (and can be acquired)
          // only once it succeeded.
          const pending = resetting.get(key) ?? new Set<Promise<void>>();
          resetting.set(key, pending);
          const done: Promise<void> = giveBack()
            .catch(() => {})
            .finally(() => {
              pending.delete(done);
              if (pending.size === 0 && resetting.get(key) === pending) resetting.delete(key);
            });
          pending.add(done);
        },
      };
      async function giveBack(): Promise<void> {
        let timer: NodeJS.Timeout | undefined;
        const ok = await Promise.race([
          e.kind.reset(e.session).then(
            () => true,
            () => false,
          ),
          new Promise<boolean>((r) => {
            timer = setTimeout(() => r(false), RESET_TIMEOUT_MS);
          }),
        ]);
        clearTimeout(timer);
        if (!ok || closed || e.gone) return drop(e);
        await park(e);
      }
    },
    warm<T>(identity: SessionIdentity, kind: SessionKind<T>) {
      // A pool that keeps no idle session could not keep it either.
      if (closed || opts.maxIdle === 0) return;
      const key = sessionKey(identity);
      if (idle.get(key)?.some(usable) || resetting.has(key) || opening.has(key)) return;
      const done = kind
        .open()
        .then(
          async (session) => {
            const e = entryOf(key, session, kind as SessionKind<unknown>);
            await (closed || e.gone ? drop(e) : park(e));
            return null;
          },
          (failure: unknown) => ({ failure }),
        )
        .catch(() => null)
        .finally(() => {
          if (opening.get(key) === done) opening.delete(key);
        });
      opening.set(key, done);
    },
    hold(key, h, idleMs) {
      void takeHeld(key)?.close();
      if (closed) {
        void h.close();
        return;
      }
      const timer = setTimeout(() => {
        if (held.get(key)?.held === h) void takeHeld(key)?.close();
      }, idleMs);
      timer.unref();
      held.set(key, { held: h, timer });
    },
    take: <T extends Held>(key: string) => takeHeld(key) as T | null,
    stats: () => ({ ...counts, idle: order.size }),
    async close() {
      closed = true;
      const kept = [...held.keys()].map((k) => takeHeld(k)!);
      // A session whose reset is under way is closed when the reset ends (closed is set).
      const resets = [...resetting.values()].flatMap((set) => [...set]);
      // A session `warm` is opening is closed once open (closed is set).
      await Promise.all([
        ...[...order].map(drop),
        ...kept.map((h) => h.close()),
        ...resets,
        ...opening.values(),
      ]);
    },
  };
}
