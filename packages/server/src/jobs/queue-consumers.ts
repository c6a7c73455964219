// This process's consumers of the queues (jobs/queue.ts): when each fetches, and how a fetched
// job runs its handler and completes.
import { PgDialect } from 'drizzle-orm/pg-core';
import type PgBoss from 'pg-boss';
import type { TrackedExecutor } from './queue-boss';
import type { Presence } from './queue-presence';
import { type FetchWith, fetchSql, READY_SQL } from './queue-sql';

const dialect = new PgDialect();

/**
 * How soon a worker with a free slot that heard of jobs named to other workers looks whether any
 * is still waiting (the worker named was busy, or is gone): the longest such a job waits for a
 * free worker, and at most one statement per interval per worker.
 */
const READY_CHECK_MS = 150;

/**
 * This process's consumer of one queue: `capacity` jobs at a time (one per `work` call), fetched
 * by one statement for as many as are free. It fetches when told a job may be waiting (a
 * notification naming this worker, a job sent from this process, its own full batch), after a
 * job when more may be waiting, and when a ready check (the poll, or one after hearing of jobs
 * named to other workers) finds a job ready. A worker with nothing to do costs a notification
 * heard per new job, and no statement while jobs find their workers.
 */
/** What a handler is given beside its payload (queue.ts JobHandler). */
export type FetchedJobInfo = {
  id: string;
  retryCount: number;
  /** `fetchedWith`: the job's row of the consumer's `fetchWith` (null: none), when it has one. */
  fetchedWith?: Record<string, unknown> | null;
};

/** What a consumer needs of its queue's job definition (queue.ts QueueJob). */
export type ConsumedJob = { payload: { parse(data: unknown): unknown }; policy: { expireInSeconds: number } };

export type Consumer = {
  /** The queue's name (queue.ts JobName). */
  name: string;
  /** The queue's partition of pgboss.job (pg-boss 10 gives each queue its own). */
  table: string;
  handler: (data: any, job: FetchedJobInfo) => Promise<void>;
  fetchWith?: FetchWith;
  capacity: number;
  active: number;
  /** More jobs may be waiting: the last fetch filled every free slot, or a notification found none free. */
  more: boolean;
  fetching: boolean;
  /** Told to look while a fetch was in flight. */
  again: boolean;
};

/** The fetch statements of a consumer (alone, and with other workers about), as it sends them. */
export function fetchTexts(c: Pick<Consumer, 'name' | 'table' | 'fetchWith'>) {
  return [false, true].map((lazy) => dialect.sqlToQuery(fetchSql(c.name, c.table, 1, c.fetchWith, lazy)).sql);
}

export type Consumers = ReturnType<typeof queueConsumers>;

export function queueConsumers(o: {
  tracked: TrackedExecutor;
  boss: PgBoss;
  jobOf: (name: string) => ConsumedJob;
  presence: Presence;
  stopping: () => boolean;
  listening: () => boolean;
}) {
  const { tracked, boss, jobOf, presence, stopping, listening } = o;
  const consumers = new Map<string, Consumer>();
  const running = new Set<Promise<void>>();
  // Jobs their handler completed in its own transaction (`complete`): nothing left to send.
  const completedInTx = new Set<string>();

  const look = (c: Consumer) => {
    // A stopping worker hands fetched runs back to the queue; it must not fetch them again.
    if (stopping()) return;
    if (c.fetching) {
      c.again = true;
      return;
    }
    const free = c.capacity - c.active;
    if (free <= 0) return;
    c.fetching = true;
    c.again = false;
    const fetch = dialect.sqlToQuery(fetchSql(c.name, c.table, free, c.fetchWith, presence.peersAbout() > 0));
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
    if (stopping() || free.length === 0) return;
    tracked.db
      .executeSql(READY_SQL, [free.map((c) => c.name)])
      .then(({ rows }) => {
        for (const { name } of rows as { name: string }[]) {
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
        if (c.more || !listening()) look(c);
      });
    running.add(done);
  };

  return {
    consumers,
    running,
    completedInTx,
    look,
    checkReady,
    checkSoon,
    cancelReadyCheck() {
      if (readyCheck) clearTimeout(readyCheck);
    },
  };
}
