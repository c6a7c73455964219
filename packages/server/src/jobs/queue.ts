import { type SQL, sql } from 'drizzle-orm';
import PgBoss from 'pg-boss';
import type { DbOrTx, SqlExecutor, Store } from '../db/client';
import { type JobData, type JobName, jobCatalog, jobNames } from './catalog';

export type EnqueueOptions = {
  singletonKey?: string;
  /** With singletonKey: at most one job per key in each slot of this many seconds. */
  singletonSeconds?: number;
  startAfter?: number | Date;
};

export type JobHandler<N extends JobName> = (
  data: JobData<N>,
  job: { id: string; retryCount: number },
) => Promise<void>;

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
   * Marks a job done inside `tx` (it commits with the business change); pg-boss's own
   * completion after the handler then finds nothing left to do.
   */
  complete(tx: DbOrTx, name: JobName, jobId: string): Promise<void>;
  work<N extends JobName>(name: N, handler: JobHandler<N>, opts?: { batchSize?: number }): Promise<void>;
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

/** NOTIFY channel of new jobs; the payload is the queue's name. */
export const JOBS_CHANNEL = 'sluice_jobs';

/** Slots of a queue beyond its first poll this many times less often (they are woken instead). */
const SPARE_POLL_FACTOR = 15;

/** How long a stopping queue waits for handlers still running before pg-boss fails their jobs. */
const HANDLER_WAIT_MS = 12_000;

/**
 * pg-boss's connection to the store, counting its statements in flight: pg-boss completes (and
 * fails) jobs without awaiting that, so a stopping queue waits for them before the store closes.
 * Once the queue has stopped, a statement pg-boss still sends (a handler that outlived the stop)
 * is not sent: its job stays active, expires and is retried, as when a worker process dies.
 */
function trackedExecutor(store: Store) {
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  return {
    db: {
      executeSql(text: string, values?: unknown[]) {
        if (closed) return Promise.resolve({ rows: [] });
        const p = store.executeSql(text, values);
        inFlight.add(p);
        p.then(
          () => inFlight.delete(p),
          () => inFlight.delete(p),
        );
        return p;
      },
    } satisfies SqlExecutor,
    async drain() {
      // A completion may only be sent a tick after its handler returned.
      await new Promise((r) => setImmediate(r));
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      closed = true;
    },
  };
}

type WorkerSlot = { id: string; busy: boolean };

export async function openQueue(
  store: Store,
  opts: { pollSeconds: number; supervise: boolean },
): Promise<Queue> {
  const tracked = trackedExecutor(store);
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
  for (const name of jobNames) {
    const def = jobCatalog[name];
    await boss.createQueue(name, {
      name,
      retryLimit: def.retryLimit,
      retryDelay: def.retryDelay,
      retryBackoff: def.retryBackoff,
      expireInSeconds: def.expireInSeconds,
    } as any);
  }
  const stopHooks: (() => Promise<void>)[] = [];
  // Workers sleep between polls; a new job wakes them at once: NOTIFY (sent with the job, so only
  // on commit) reaches every listening process, this one included. Polling stays the fallback.
  // One notification is one job: it wakes one idle worker of its queue here (the next in turn),
  // not all of them, which would only race each other for the one row.
  const slots = new Map<string, WorkerSlot[]>();
  const turn = new Map<string, number>();
  const running = new Set<Promise<void>>();
  let stopping = false;
  const wake = (name: string | null) => {
    // A stopping worker hands fetched runs back to the queue; waking it would fetch them again.
    if (stopping) return;
    if (name === null) {
      // Notifications may have been missed: everyone looks.
      for (const list of slots.values()) for (const slot of list) boss.notifyWorker(slot.id);
      return;
    }
    const list = slots.get(name) ?? [];
    const start = turn.get(name) ?? 0;
    for (let i = 0; i < list.length; i++) {
      const slot = list[(start + i) % list.length];
      if (slot.busy) continue;
      turn.set(name, (start + i + 1) % list.length);
      boss.notifyWorker(slot.id);
      return;
    }
    // All busy: each fetches again as soon as its job is done.
  };
  let unlisten: (() => Promise<void>) | null = null;
  let listening: Promise<void> | null = null;
  const listen = () => {
    listening ??= store
      .listen(JOBS_CHANNEL, wake)
      .then((stop) => {
        unlisten = stop;
      })
      .catch(() => {
        // No LISTEN (e.g. a pooler in transaction mode): workers fall back to polling.
      });
    return listening;
  };
  return {
    boss,
    async enqueue(tx, name, data, o = {}) {
      const payload = jobCatalog[name].schema.parse(data);
      const sendOpts: Record<string, unknown> = {};
      if (o.singletonKey) sendOpts.singletonKey = o.singletonKey;
      if (o.singletonSeconds) sendOpts.singletonSeconds = o.singletonSeconds;
      if (o.startAfter) sendOpts.startAfter = o.startAfter;
      const db = tx ? executorFor(tx) : store;
      if (tx) sendOpts.db = db;
      const id = await boss.send(name, payload as object, sendOpts as any);
      if (id) {
        await db.executeSql('select pg_notify($1, $2)', [JOBS_CHANNEL, name]);
        // Already committed: this process's workers need not wait for the round trip.
        if (!tx) wake(name);
      }
      return id;
    },
    async complete(tx, name, jobId) {
      await boss.complete(name, jobId, null as any, { db: executorFor(tx) } as any);
    },
    async work(name, handler, o = {}) {
      await listen();
      const slot: WorkerSlot = { id: '', busy: false };
      // One slot per queue polls at the configured interval; the others are woken (NOTIFY, a job
      // found by a sibling, their own last job done) and poll only rarely, as a last resort.
      const first = (slots.get(name) ?? []).length === 0;
      slot.id = await boss.work(
        name,
        {
          pollingIntervalSeconds: first ? opts.pollSeconds : opts.pollSeconds * SPARE_POLL_FACTOR,
          batchSize: o.batchSize ?? 1,
        },
        async (jobs) => {
          slot.busy = true;
          // Without notifications nobody else learns that work is waiting: pass the word on.
          if (!unlisten) wake(name);
          const done = (async () => {
            for (const job of jobs) {
              const data = jobCatalog[name].schema.parse(job.data) as JobData<typeof name>;
              await handler(data, { id: job.id, retryCount: (job as any).retryCount ?? 0 });
            }
          })();
          const tracked = done.catch(() => {});
          running.add(tracked);
          try {
            await done;
          } finally {
            running.delete(tracked);
            slot.busy = false;
            // A worker that just found work looks for more at once instead of sleeping a poll.
            if (!stopping) boss.notifyWorker(slot.id);
          }
        },
      );
      slots.set(name, [...(slots.get(name) ?? []), slot]);
    },
    onStop(hook) {
      stopHooks.push(hook);
    },
    async stop() {
      // Order matters: nothing may reach the store once it closes after this resolves.
      // 1. No new fetches (each pg-boss loop ends after its current job), no more wake-ups.
      stopping = true;
      const deadline = new Promise((r) => setTimeout(r, HANDLER_WAIT_MS).unref());
      for (const list of slots.values()) {
        for (const slot of list) await boss.offWork({ id: slot.id } as any).catch(() => {});
      }
      // 2. Long jobs hand themselves back (runs go back to the queue), then every handler ends.
      await Promise.all(stopHooks.splice(0).map((hook) => hook().catch(() => {})));
      await Promise.race([Promise.allSettled([...running]), deadline]);
      await listening;
      await unlisten?.();
      // 3. pg-boss stops (failing what is still active after its timeout) and its completions land.
      await boss.stop({ graceful: true, wait: true, timeout: 5_000 } as any);
      await tracked.drain();
    },
  };
}
