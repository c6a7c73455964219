import { type SQL, sql } from 'drizzle-orm';
import PgBoss from 'pg-boss';
import type { z } from 'zod';
import type { DbOrTx, SqlExecutor, Store } from '../db/client';
import { statementName } from '../db/named';
import { executorFor, luxonWithoutIntl, trackedExecutor } from './queue-boss';
import { type Consumer, type FetchedJobInfo, fetchTexts, queueConsumers } from './queue-consumers';
import { workerPresence } from './queue-presence';
import { type FetchWith, JOBS_CHANNEL, jobInsertSql } from './queue-sql';

// The queue: pg-boss's tables on the platform store, with our own fetch, announcements and
// consumers beside it. By concern: queue-boss.ts (pg-boss's connection), queue-presence.ts (which
// worker answers a job), queue-consumers.ts (fetching and running jobs), queue-sql.ts (the
// statements).

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

export type JobHandler<N extends JobName> = (data: JobData<N>, job: FetchedJobInfo) => Promise<void>;

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
    /** `warm`: a hot queue, whose fetch the pooled connections are warmed with first (db/warm.ts). */
    opts?: { concurrency?: number; fetchWith?: FetchWith; warm?: boolean },
  ): Promise<void>;
  /** Runs before the queue stops (in parallel), e.g. to hand long jobs back before the store closes. */
  onStop(hook: () => Promise<void>): void;
  stop(): Promise<void>;
};

/** How long a stopping queue waits for handlers still running before it stops pg-boss. */
const HANDLER_WAIT_MS = 12_000;

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
  let stopping = false;
  let listening = false;
  const presence = workerPresence(tracked.db, () => listening && !stopping);
  const { tag, sayHere } = presence;
  const { consumers, running, completedInTx, look, checkReady, checkSoon, cancelReadyCheck } = queueConsumers(
    {
      tracked,
      boss,
      jobOf: (name) => jobOf(name as JobName),
      presence,
      stopping: () => stopping,
      listening: () => listening,
    },
  );

  const wake = (payload: string | null) => {
    if (stopping) return;
    if (payload !== null && presence.heard(payload)) return;
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
    if (seq !== undefined && !presence.named(Number(seq) || 0)) {
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
      const announcement = presence.announcement(name, !!tx);
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
      const alone = consumers.has(name) && listening && presence.peersAbout() === 0;
      return {
        sql: (from) => jobInsertSql(name, payload, from, alone ? null : presence.announcement(name)),
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
      // A hot queue's fetch is learnt by the pooled connections before its first one (db/warm.ts).
      if (o.warm) await store.warmUp(fetchTexts(c).map((text) => ({ name: statementName(text), text })));
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
      await presence.leave(listening);
      cancelReadyCheck();
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
