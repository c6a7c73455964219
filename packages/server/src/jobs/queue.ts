import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { DbOrTx, SqlExecutor, Store } from '../db/client';
import { statementName } from '../db/named';
import { type FetchWith, fetchSql, JOBS_CHANNEL, jobInsertSql, READY_SQL } from './queue-sql';

/**
 * The payload schema of every job, by name. Each job file adds its own entry beside its
 * definition (`declare module './queue'`, see docs/architecture.md#background-work), so whoever
 * enqueues gets typed payloads without importing the handlers, which import the deps that
 * import this file.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in each job file
export interface JobPayloads {}
export type JobName = keyof JobPayloads;
export type JobData<N extends JobName> = z.infer<JobPayloads[N]>;

/** How pg-boss retries and expires the jobs of one queue. */
export type JobPolicy = {
  /** Retries after the first try fails (0: never retried by the queue). */
  retry: { limit: number; delaySeconds: number; backoff: boolean };
  /** A job still running after this long fails (and is retried as `retry` says). */
  expireInSeconds: number;
};

/** What the queue needs of a job definition (jobs/define.ts): its name, payload and policy. */
export type QueueJob = { name: JobName; payload: z.ZodType; policy: JobPolicy };

export type EnqueueOptions = {
  singletonKey?: string;
  /** With singletonKey: at most one job per key in each slot of this many seconds. */
  singletonSeconds?: number;
  startAfter?: number | Date;
};

export type JobHandler<N extends JobName> = (
  data: JobData<N>,
  /** `fetchedWith`: the job's row of the consumer's `fetchWith` (null: none), when it has one. */
  job: { id: string; retryCount: number; fetchedWith?: Record<string, unknown> | null },
) => Promise<void>;

export type { FetchWith } from './queue-sql';
export { JOBS_CHANNEL } from './queue-sql';

export type Queue = {
  boss: PgBoss;
  /** Enqueue inside `tx` when given, so the job commits (or not) with the business change. */
  enqueue<N extends JobName>(
    tx: DbOrTx | null,
    name: N,
    data: JobData<N>,
    opts?: EnqueueOptions,
  ): Promise<string | null>;
  /**
   * Marks a job done inside `tx` (it commits with the business change); nothing is sent for it
   * after the handler returns.
   */
  complete(tx: DbOrTx, name: JobName, jobId: string): Promise<void>;
  /**
   * The same completion as a CTE body of the caller's own statement, done only where `guard`
   * holds (pg-boss's completeJobs on its table); call `done()` once that statement committed
   * having completed it, so nothing is sent for it after the handler returns.
   */
  completion(name: JobName, jobId: string): { sql(guard: SQL): SQL; done(): void };
  /**
   * A job's insert and its announcement as a CTE body of the caller's own statement (pg-boss's
   * insert on its table, our queue policies): one job for each row of `from` (a CTE of that
   * statement), so it commits with the business change in the same round trip. Call `sent()`
   * once that statement committed having inserted it: this process's consumers look at once
   * (and the statement sends no NOTIFY when they are the only workers about).
   */
  insertion<N extends JobName>(name: N, data: JobData<N>): { sql(from: SQL): SQL; sent(): void };
  /** Consumes a queue in this process, `concurrency` (1) jobs at a time; once per queue. */
  work<N extends JobName>(
    name: N,
    handler: JobHandler<N>,
    opts?: { concurrency?: number; fetchWith?: FetchWith },
  ): Promise<void>;
  /** Runs before the queue stops (in parallel), e.g. to hand long jobs back before the store closes. */
  onStop(hook: () => Promise<void>): void;
  stop(): Promise<void>;
};

/** pg-boss speaks (text, $n values); run that through a drizzle transaction. */
export function executorFor(db: DbOrTx): SqlExecutor {
  return {
    async executeSql(text, values = []) {
      const parts = text.split(/\$(\d+)/);
      // drizzle renders an undefined parameter as nothing at all, so pass it as NULL; an array
      // would become a list of parameters, so it goes as one (a PostgreSQL array).
      const chunks: SQL[] = parts.map((part, i) => {
        if (i % 2 === 0) return sql.raw(part);
        const value = values[Number(part) - 1] ?? null;
        return Array.isArray(value) ? sql`${sql.param(value)}` : sql`${value}`;
      });
      const res: any = await db.execute(sql.join(chunks, sql.raw('')));
      return { rows: res.rows ?? res };
    },
  };
}

const dialect = new PgDialect();

/**
 * pg-boss computes its schedules (`schedule` in jobs/define.ts, all in UTC) with cron-parser,
 * whose dates are luxon's. Left to its defaults, luxon asks `Intl` for the system's locale and
 * time zone on the first date it makes, and that loads ICU's locale and time-zone data: ~8 MB
 * resident in every `serve` and `worker` from the first minute on (docs/benchmarks.md, Memory).
 * With UTC and en-US as luxon's defaults the dates are the same and `Intl` is never asked. Set on
 * the luxon that pg-boss's cron-parser loads, whichever copy that is; no other module of ours
 * uses luxon.
 */
function luxonWithoutIntl() {
  const cronParser = createRequire(createRequire(import.meta.url).resolve('pg-boss')).resolve('cron-parser');
  const { Settings } = createRequire(cronParser)('luxon');
  Settings.defaultZone = 'utc';
  Settings.defaultLocale = 'en-US';
}

/** How long other workers seen (saying `here`) count as present. */
const PEER_WINDOW_MS = 60_000;
/** How often a listening worker says `here`, well within PEER_WINDOW_MS. */
const PRESENCE_MS = 20_000;

/**
 * How soon a worker with a free slot that heard of jobs named to other workers looks whether any
 * is still waiting (the worker named was busy, or is gone): the longest such a job waits for a
 * free worker, and at most one statement per interval per worker.
 */
const READY_CHECK_MS = 150;

/** How long a stopping queue waits for handlers still running before it stops pg-boss. */
const HANDLER_WAIT_MS = 12_000;

/**
 * pg-boss's connection to the store, counting its statements in flight, so a stopping queue
 * waits for them before the store closes. Once the queue has stopped, a statement still sent (a
 * handler that outlived the stop completing its job) is not sent: its job stays active, expires
 * and is retried, as when a worker process dies.
 */
function trackedExecutor(store: Store) {
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  const track = (send: () => Promise<{ rows: any[] }>) => {
    if (closed) return Promise.resolve({ rows: [] });
    const p = send();
    inFlight.add(p);
    p.then(
      () => inFlight.delete(p),
      () => inFlight.delete(p),
    );
    return p;
  };
  return {
    db: {
      executeSql(text: string, values?: unknown[]) {
        return track(() => store.executeSql(text, values));
      },
      /** Our own hot statements (the fetch): named, planned once per connection (db/named.ts). */
      prepared(text: string, values: unknown[]) {
        return track(() => store.prepared(statementName(text), text, values));
      },
    } satisfies SqlExecutor & { prepared(text: string, values: unknown[]): Promise<{ rows: any[] }> },
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      closed = true;
    },
  };
}

/**
 * This process's consumer of one queue: `capacity` jobs at a time (one per `work` call), fetched
 * by one statement for as many as are free. It fetches when told a job may be waiting (a
 * notification naming this worker, a job sent from this process, its own full batch), after a
 * job when more may be waiting, and when a ready check (the poll, or one after hearing of jobs
 * named to other workers) finds a job ready. A worker with nothing to do costs a notification
 * heard per new job, and no statement while jobs find their workers.
 */
type Consumer = {
  name: JobName;
  /** The queue's partition of pgboss.job (pg-boss 10 gives each queue its own). */
  table: string;
  handler: JobHandler<any>;
  fetchWith?: FetchWith;
  capacity: number;
  active: number;
  /** More jobs may be waiting: the last fetch filled every free slot, or a notification found none free. */
  more: boolean;
  fetching: boolean;
  /** Told to look while a fetch was in flight. */
  again: boolean;
};

export async function openQueue(
  store: Store,
  opts: { pollSeconds: number; supervise: boolean; jobs: readonly QueueJob[] },
): Promise<Queue> {
  const tracked = trackedExecutor(store);
  luxonWithoutIntl();
  const boss = new PgBoss({
    db: tracked.db,
    schema: 'pgboss',
    supervise: opts.supervise,
    schedule: opts.supervise,
    migrate: true,
  } as any);
  boss.on('error', () => {
    // pg-boss retries its own maintenance; connection loss is reported by /readyz instead.
  });
  await boss.start();
  const jobs = new Map(opts.jobs.map((job) => [job.name, job]));
  const jobOf = (name: JobName) => {
    const job = jobs.get(name);
    if (!job) throw new Error(`no job definition named ${name}`);
    return job;
  };
  for (const { name, policy } of jobs.values()) {
    const { retry, expireInSeconds } = policy;
    await boss.createQueue(name, {
      name,
      retryLimit: retry.limit,
      retryDelay: retry.delaySeconds,
      retryBackoff: retry.backoff,
      expireInSeconds,
    } as any);
  }
  const stopHooks: (() => Promise<void>)[] = [];
  // This worker's name in presence notifications and job announcements, and the other workers present.
  const tag = crypto.randomUUID().slice(0, 8);
  const peers = new Map<string, number>();
  // This process's announcements so far (`insertion`, `enqueue`): their sequence number.
  let announcements = 0;
  const peersAbout = () => {
    const now = Date.now();
    for (const [t, at] of peers) if (now - at > PEER_WINDOW_MS) peers.delete(t);
    return peers.size;
  };
  /**
   * Whether the announcement with sequence number `seq` names this worker: the same one in every
   * worker's view once they have heard each other's `here` (every worker consumes the same queues,
   * jobs/worker.ts). Views that differ for a moment (a worker starting or gone) make two workers
   * answer (one fetch finds nothing) or none at once (the ready check finds the job).
   */
  const named = (seq: number) => {
    if (peersAbout() === 0) return true;
    const order = [tag, ...peers.keys()].sort();
    return order[seq % order.length] === tag;
  };
  const consumers = new Map<string, Consumer>();
  const running = new Set<Promise<void>>();
  // Jobs their handler completed in its own transaction (`complete`): nothing left to send.
  const completedInTx = new Set<string>();
  let stopping = false;
  let listening = false;

  const look = (c: Consumer) => {
    // A stopping worker hands fetched runs back to the queue; it must not fetch them again.
    if (stopping) return;
    if (c.fetching) {
      c.again = true;
      return;
    }
    const free = c.capacity - c.active;
    if (free <= 0) return;
    c.fetching = true;
    c.again = false;
    const fetch = dialect.sqlToQuery(fetchSql(c.name, c.table, free, c.fetchWith, peersAbout() > 0));
    tracked.db
      .prepared(fetch.sql, fetch.params)
      .then(({ rows: jobs }) => {
        // Fewer than asked for: the queue had no more (for now).
        c.more = jobs.length === free;
        for (const job of jobs) start(c, job as unknown as FetchedJob);
      })
      .catch(() => {
        // The store is unreachable: the next poll tries again.
      })
      .finally(() => {
        c.fetching = false;
        if (c.again) {
          if (c.capacity - c.active > 0) look(c);
          else c.more = true;
        }
      });
  };

  /**
   * Looks, for every consumer with a free slot, whether a job is ready, and fetches for those
   * with one: one statement for all of them. The poll, and the check after hearing of jobs named
   * to other workers.
   */
  const checkReady = () => {
    const free = [...consumers.values()].filter((c) => c.capacity - c.active > 0 && !c.fetching);
    if (stopping || free.length === 0) return;
    tracked.db
      .executeSql(READY_SQL, [free.map((c) => c.name)])
      .then(({ rows }) => {
        for (const { name } of rows as { name: JobName }[]) {
          const c = consumers.get(name);
          if (!c) continue;
          c.more = true;
          look(c);
        }
      })
      .catch(() => {
        // The store is unreachable: the next poll tries again.
      });
  };
  // A ready check is pending: jobs named to other workers were heard since the last one.
  let readyCheck: NodeJS.Timeout | null = null;
  const checkSoon = () => {
    readyCheck ??= setTimeout(() => {
      readyCheck = null;
      checkReady();
    }, READY_CHECK_MS);
  };

  type FetchedJob = {
    id: string;
    data: unknown;
    retryCount?: number;
    fetchedWith?: Record<string, unknown> | null;
  };
  const start = (c: Consumer, job: FetchedJob) => {
    c.active++;
    const def = jobOf(c.name);
    let expiry: NodeJS.Timeout | undefined;
    const handled = (async () => {
      const data = def.payload.parse(job.data);
      // As pg-boss does: a handler that outlives its job's expiry fails it (the job is retried
      // as its queue says); the handler itself is not interrupted.
      const expired = new Promise<never>((_, reject) => {
        expiry = setTimeout(
          () => reject(new Error(`handler exceeded the job's ${def.policy.expireInSeconds} s`)),
          def.policy.expireInSeconds * 1000,
        );
        expiry.unref();
      });
      const fetched = { id: job.id, retryCount: job.retryCount ?? 0 };
      await Promise.race([
        c.handler(data, c.fetchWith ? { ...fetched, fetchedWith: job.fetchedWith ?? null } : fetched),
        expired,
      ]);
    })();
    const done = handled
      .then(
        async () => {
          if (!completedInTx.delete(job.id)) await boss.complete(c.name, job.id);
        },
        async (err) => {
          completedInTx.delete(job.id);
          await boss.fail(c.name, job.id, err);
        },
      )
      .catch(() => {
        // Not recorded (the store went away): the job stays active, expires and is retried.
      })
      .finally(() => {
        clearTimeout(expiry);
        running.delete(done);
        c.active--;
        // More may be waiting (or, without notifications, nobody would say so): look at once
        // instead of waiting for the poll. Otherwise an empty fetch after every job is only cost.
        if (c.more || !listening) look(c);
      });
    running.add(done);
  };

  const wake = (payload: string | null) => {
    if (stopping) return;
    if (payload?.startsWith('here:') || payload?.startsWith('bye:')) {
      const [kind, by] = payload.split(':');
      if (by === tag) return;
      if (kind === 'bye') {
        peers.delete(by);
        return;
      }
      const known = peers.has(by);
      peers.set(by, Date.now());
      // A worker heard for the first time may not know of this one yet.
      if (!known) sayHere();
      return;
    }
    // Said by older workers when they took a job: nothing to do with it.
    if (payload?.startsWith('taken:')) return;
    if (payload === null) {
      // Notifications may have been missed (a `here` among them): say who is here again, and
      // every queue looks.
      sayHere();
      for (const c of consumers.values()) {
        c.more = true;
        look(c);
      }
      return;
    }
    const [name, , by, seq] = payload.split(':');
    // Its own announcement: this process's consumers were woken when the jobs were sent.
    if (by === tag) return;
    const c = consumers.get(name as JobName);
    if (!c) return;
    if (seq !== undefined && !named(Number(seq) || 0)) {
      // Another worker answers it, at once or when it has a slot free; if this one has a free
      // slot, it looks shortly whether the job still waits.
      if (c.capacity - c.active > 0) checkSoon();
      return;
    }
    if (c.fetching) c.again = true;
    else if (c.capacity - c.active > 0) look(c);
    else c.more = true;
  };
  // The fallback (and how delayed jobs are found): one statement per interval for every queue
  // with a free slot, a fetch only for those with a job ready.
  const poll = setInterval(checkReady, opts.pollSeconds * 1000);
  poll.unref();
  // Presence costs a NOTIFY per worker every PRESENCE_MS, none per job; sent without waiting
  // for a WAL flush (nothing is written), and lost without harm (the next one comes).
  const announce = (word: 'here' | 'bye') =>
    tracked.db
      .executeSql(`select set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`, [
        JOBS_CHANNEL,
        `${word}:${tag}`,
      ])
      .then(
        () => {},
        () => {},
      );
  const sayHere = () => {
    if (listening && !stopping) void announce('here');
  };
  const presence = setInterval(sayHere, PRESENCE_MS);
  presence.unref();
  let unlisten: (() => Promise<void>) | null = null;
  let listenStarted: Promise<void> | null = null;
  const listen = () => {
    listenStarted ??= store
      .listen(JOBS_CHANNEL, wake)
      .then((stop) => {
        unlisten = stop;
        listening = true;
        sayHere();
      })
      .catch(() => {
        // No LISTEN (e.g. a pooler in transaction mode): workers fall back to polling.
      });
    return listenStarted;
  };
  return {
    boss,
    async enqueue(tx, name, data, o = {}) {
      const payload = jobOf(name).payload.parse(data);
      const sendOpts: Record<string, unknown> = {};
      if (o.singletonKey) sendOpts.singletonKey = o.singletonKey;
      if (o.singletonSeconds) sendOpts.singletonSeconds = o.singletonSeconds;
      if (o.startAfter) sendOpts.startAfter = o.startAfter;
      const db = tx ? executorFor(tx) : tracked.db;
      // The notification goes with the insert, in one statement: pg-boss's insert (one
      // `INSERT … RETURNING id`) becomes a CTE whose row, if any, sends it; a job not inserted
      // (a singleton already queued) notifies nobody. Sent outside a transaction, this process's
      // consumers are woken here (below) and skip it, as they skip their own `insertion`s.
      const announcement = `${name}:1:${tx ? '-' : tag}:${announcements++}`;
      let notified = false;
      sendOpts.db = {
        executeSql(text: string, values?: unknown[]) {
          if (!/^\s*INSERT INTO\b[\s\S]*\bRETURNING id\s*$/i.test(text)) return db.executeSql(text, values);
          notified = true;
          return db.executeSql(
            `WITH sluice_job AS (${text}) SELECT id, pg_notify('${JOBS_CHANNEL}', '${announcement}') FROM sluice_job`,
            values,
          );
        },
      } satisfies SqlExecutor;
      const id = await boss.send(name, payload as object, sendOpts as any);
      if (id) {
        if (!notified) await db.executeSql('select pg_notify($1, $2)', [JOBS_CHANNEL, announcement]);
        // Already committed: this process's workers need not wait for the round trip.
        if (!tx) wake(name);
      }
      return id;
    },
    async complete(tx, name, jobId) {
      await boss.complete(name, jobId, null as any, { db: executorFor(tx) } as any);
      completedInTx.add(jobId);
    },
    insertion(name, data) {
      const payload = jobOf(name).payload.parse(data);
      // This process consumes the queue and no other worker is about: waking it here is enough.
      const alone = consumers.has(name) && listening && peersAbout() === 0;
      return {
        sql: (from) =>
          jobInsertSql(name, payload, from, alone ? null : `${name}:1:${tag}:${announcements++}`),
        sent: () => wake(name),
      };
    },
    completion(name, jobId) {
      return {
        sql: (guard) => sql`update pgboss.job set completed_on = now(), state = 'completed', output = null
                  where name = ${name} and id = ${jobId}::uuid and state = 'active' and ${guard}`,
        done: () => completedInTx.add(jobId),
      };
    },
    async work(name, handler, o = {}) {
      if (consumers.has(name)) throw new Error(`queue ${name} is already consumed here`);
      jobOf(name);
      await listen();
      const { rows } = await tracked.db.executeSql(
        'select partition_name from pgboss.queue where name = $1',
        [name],
      );
      const c: Consumer = {
        name,
        table: rows[0]?.partition_name ?? 'job',
        handler: handler as JobHandler<any>,
        fetchWith: o.fetchWith,
        capacity: Math.max(1, o.concurrency ?? 1),
        active: 0,
        more: true,
        fetching: false,
        again: false,
      };
      consumers.set(name, c);
      look(c);
    },
    onStop(hook) {
      stopHooks.push(hook);
    },
    async stop() {
      // Order matters: nothing may reach the store once it closes after this resolves.
      // 1. No new fetches, no more wake-ups.
      stopping = true;
      clearInterval(poll);
      clearInterval(presence);
      if (listening) await announce('bye');
      if (readyCheck) clearTimeout(readyCheck);
      const deadline = new Promise((r) => setTimeout(r, HANDLER_WAIT_MS).unref());
      // 2. Long jobs hand themselves back (runs go back to the queue), then every handler ends
      //    and its completion lands.
      await Promise.all(stopHooks.splice(0).map((hook) => hook().catch(() => {})));
      await Promise.race([Promise.allSettled([...running]), deadline]);
      await listenStarted;
      await unlisten?.();
      // 3. pg-boss stops, then whatever it still sent lands.
      await boss.stop({ graceful: true, wait: true, timeout: 5_000 } as any);
      await tracked.drain();
    },
  };
}
