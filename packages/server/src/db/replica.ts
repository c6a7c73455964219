import { openStore, type Store } from './client';

// Lists read from a hot standby of the store (docs/operations.md "Read replicas"): the runs and
// events lists and a run's log page, the reads that grow with a deployment's users, go to
// DATABASE_READ_URL while it is known to hold every commit the store made more than
// SLUICE_READ_MAX_LAG_MS ago; otherwise, and whenever a read fails there, the store answers.
//
// How fresh the standby is, is measured, not guessed from timestamps (an idle store makes no
// commits, so "time since the last replayed commit" grows without the standby falling behind):
// every check reads the store's WAL position, then the standby's replayed position; the standby
// holds everything committed before the newest check whose position it has replayed.

export type ReadsOptions = {
  url: string;
  maxLagMs: number;
  /** How often the standby's position is read (default: a quarter of maxLagMs, 50 ms at least). */
  checkMs?: number;
  poolSize?: number;
  /** Connections opened (warm) once the standby is first fresh, and kept, as the store's (db/warm.ts). */
  poolMin?: number;
  pooler?: 'none' | 'transaction';
  /** Injected in tests; Date.now otherwise. */
  clock?: () => number;
  /** Told when the standby stops or starts serving reads, with why (never its address). */
  onChange?: (usable: boolean, reason: string) => void;
  /** Connection-level errors of the standby's pool. */
  onBackgroundError?: (err: Error) => void;
  /** No timer: the caller calls check() (tests). */
  manual?: boolean;
};

/**
 * Thrown by a read on the standby that must see what the store sees (a running run's log: its
 * last lines and its end can reach the standby after a client saw the end on the store): the
 * read is made again on the store, counted as the store's.
 */
export class ReadFromStore extends Error {
  constructor() {
    super('this read needs the store');
  }
}

export type ReadsState = {
  usable: boolean;
  /** Milliseconds the standby is behind at most (now − the newest check it has replayed), or null. */
  staleMs: number | null;
  reason: string;
  served: { replica: number; primary: number; retried: number };
};

export type Reads = {
  /** Runs fn on the standby while it is fresh enough, else (or when fn fails there) on the store. */
  run<T>(fn: (store: Store) => Promise<T>): Promise<T>;
  /** Reads both positions once (the timer calls it). */
  check(): Promise<void>;
  state(): ReadsState;
  close(): Promise<void>;
};

/** How often the positions are read for a bound: a quarter of it, 50 ms at least. */
export const checkInterval = (maxLagMs: number) => Math.max(50, Math.floor(maxLagMs / 4));

/** A WAL position (`16/B374D848`) as a number that orders like it. */
export function lsnValue(text: string): bigint {
  const m = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(text);
  if (!m) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`);
}

// The cluster and the database a session is in: a physical standby has the store's.
const IDENTITY_SQL = `select (select system_identifier::text from pg_control_system()) as system,
  (select oid::text from pg_database where datname = current_database()) as db`;
/** Reads in a row that fail on the standby and not on the store before it is set aside, and for how long. */
const ASIDE_AFTER = 5;
const ASIDE_MS = 30_000;
const STARTED_SQL = 'select pg_postmaster_start_time()::text as started';
const PRIMARY_SQL = 'select pg_current_wal_lsn()::text as lsn';
const REPLICA_SQL = 'select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as lsn';

export async function openReads(primary: Store, opts: ReadsOptions): Promise<Reads> {
  const clock = opts.clock ?? Date.now;
  const replica = await openStore({
    databaseUrl: opts.url,
    dataDir: '',
    poolSize: opts.poolSize,
    poolMin: opts.poolMin,
    pooler: opts.pooler,
    onBackgroundError: opts.onBackgroundError,
  });
  /** The store's positions at recent checks, oldest first. */
  let marks: { lsn: bigint; at: number }[] = [];
  let freshAt: number | null = null;
  let usable = false;
  let reason = 'not checked yet';
  /** Set for good when the standby is another database than the store's. */
  let refused: string | null = null;
  let identity: string | null = null;
  const served = { replica: 0, primary: 0, retried: 0 };
  /** Set aside until then after reads in a row failed there and not on the store. */
  let asideUntil = 0;
  let asideReason = '';
  let failures = 0;

  let warmed = false;
  const set = (ok: boolean, why: string) => {
    const changed = ok !== usable;
    usable = ok;
    reason = why;
    if (!changed) return;
    opts.onChange?.(ok, why);
    // Warm like the store's pool once the standby first serves, so the first lists do not wait
    // for new backends (a standby that is behind or down at start is no reason not to start).
    if (ok && opts.poolMin && !warmed) {
      warmed = true;
      replica.warmUp().catch(() => {});
    }
  };

  /** Usable, unless set aside (a standby that answers checks but fails reads: a role without grants). */
  const serve = (why: string) => (clock() < asideUntil ? set(false, asideReason) : set(true, why));
  const within = () => freshAt !== null && clock() - freshAt <= opts.maxLagMs;
  const fresh = () => usable && within();

  const check = async () => {
    if (refused) return;
    try {
      if (identity === null) {
        const [mine, theirs] = await Promise.all([
          primary.executeSql(IDENTITY_SQL),
          replica.executeSql(IDENTITY_SQL),
        ]);
        const a = `${mine.rows[0].system}/${mine.rows[0].db}`;
        const b = `${theirs.rows[0].system}/${theirs.rows[0].db}`;
        if (a !== b) {
          refused = 'DATABASE_READ_URL is not a copy of the store (another cluster or database)';
          set(false, refused);
          return;
        }
        identity = a;
      }
      const at = clock();
      const mark = lsnValue((await primary.executeSql(PRIMARY_SQL)).rows[0].lsn);
      marks.push({ lsn: mark, at });
      const r = (await replica.executeSql(REPLICA_SQL)).rows[0];
      if (!r.standby) {
        // Not in recovery: the store itself under another address, or a standby promoted away from
        // it (same cluster identity, its own history since): the same server started at the same
        // instant.
        const [mine, theirs] = await Promise.all([
          primary.executeSql(STARTED_SQL),
          replica.executeSql(STARTED_SQL),
        ]);
        if (mine.rows[0].started !== theirs.rows[0].started) {
          set(false, 'DATABASE_READ_URL is no standby but another server (a promoted standby?)');
          return;
        }
        freshAt = at;
        marks = [];
        serve('the store itself');
        return;
      }
      if (r.lsn === null) {
        set(false, 'the standby has replayed nothing yet');
        return;
      }
      const replayed = lsnValue(r.lsn);
      let newest = -1;
      for (let i = 0; i < marks.length; i++) if (marks[i].lsn <= replayed) newest = i;
      if (newest >= 0) {
        freshAt = marks[newest].at;
        marks = marks.slice(newest + 1);
      }
      // Marks older than the bound can no longer make the standby fresh enough.
      const cutoff = clock() - opts.maxLagMs;
      if (marks.length > 64) marks = marks.filter((m) => m.at >= cutoff);
      if (within()) serve('replaying');
      else set(false, `the standby is more than ${opts.maxLagMs} ms behind`);
    } catch (err) {
      const e = err as Error & { code?: string };
      set(false, `the standby did not answer (${e.code ?? e.message.split('\n')[0]})`);
    }
  };

  const checkMs = opts.checkMs ?? checkInterval(opts.maxLagMs);
  let timer: NodeJS.Timeout | null = null;
  let checking: Promise<void> | null = null;
  const tick = () => {
    if (checking) return;
    checking = check().finally(() => {
      checking = null;
    });
  };
  await check();
  if (!opts.manual) {
    timer = setInterval(tick, checkMs);
    timer.unref();
  }

  return {
    async run(fn) {
      if (!fresh()) {
        served.primary++;
        return fn(primary);
      }
      let failure: unknown;
      try {
        const out = await fn(replica);
        served.replica++;
        failures = 0;
        return out;
      } catch (err) {
        failure = err;
      }
      // Whatever failed there (a lost standby, a query canceled by replay, or a row the standby
      // has not replayed yet: a not-found) is asked of the store once.
      if (failure instanceof ReadFromStore) {
        served.primary++;
        return fn(primary);
      }
      served.retried++;
      const out = await fn(primary);
      // The standby answers its checks but not this read, where the store does: after a few in a
      // row, the store answers for a while (the standby's role may lack grants on the tables).
      if (++failures >= ASIDE_AFTER) {
        const e = failure as { code?: unknown; message?: unknown };
        const what = typeof e.code === 'string' ? e.code : String(e.message ?? e).split('\n')[0];
        asideUntil = clock() + ASIDE_MS;
        asideReason = `${failures} list reads in a row failed on the standby and not on the store (last: ${what}); the store answers for ${ASIDE_MS / 1000} s`;
        failures = 0;
        set(false, asideReason);
      }
      return out;
    },
    check,
    state: () => ({
      usable: fresh(),
      staleMs: freshAt === null ? null : clock() - freshAt,
      reason: fresh() || !usable ? reason : `the standby is more than ${opts.maxLagMs} ms behind`,
      served: { ...served },
    }),
    async close() {
      if (timer) clearInterval(timer);
      await checking;
      await replica.close();
    },
  };
}

/**
 * `fn` on the deployment's read replica where one is configured and fresh, else on the store;
 * `fn`'s second argument says which it was given.
 */
export function onReads<T>(
  deps: { store: Store; reads?: Reads },
  fn: (store: Store, standby: boolean) => Promise<T>,
): Promise<T> {
  return deps.reads ? deps.reads.run((s) => fn(s, s !== deps.store)) : fn(deps.store, false);
}
