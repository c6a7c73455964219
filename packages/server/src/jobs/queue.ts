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
      // drizzle renders an undefined parameter as nothing at all, so pass it as NULL.
      const chunks: SQL[] = parts.map((part, i) =>
        i % 2 === 0 ? sql.raw(part) : sql`${values[Number(part) - 1] ?? null}`,
      );
      const res: any = await db.execute(sql.join(chunks, sql.raw('')));
      return { rows: res.rows ?? res };
    },
  };
}

/** NOTIFY channel of new jobs; the payload is the queue's name. */
export const JOBS_CHANNEL = 'sluice_jobs';

export async function openQueue(
  store: Store,
  opts: { pollSeconds: number; supervise: boolean },
): Promise<Queue> {
  const boss = new PgBoss({
    db: store,
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
  const workerIds = new Map<string, string[]>();
  let stopping = false;
  const wake = (name: string | null) => {
    // A stopping worker hands fetched runs back to the queue; waking it would fetch them again.
    if (stopping) return;
    for (const [queue, ids] of workerIds) {
      if (name === null || name === queue) for (const id of ids) boss.notifyWorker(id);
    }
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
    async work(name, handler, o = {}) {
      await listen();
      let self: string | null = null;
      self = await boss.work(
        name,
        { pollingIntervalSeconds: opts.pollSeconds, batchSize: o.batchSize ?? 1 },
        async (jobs) => {
          try {
            for (const job of jobs) {
              const data = jobCatalog[name].schema.parse(job.data) as JobData<typeof name>;
              await handler(data, { id: job.id, retryCount: (job as any).retryCount ?? 0 });
            }
          } finally {
            // A worker that just found work looks for more at once instead of sleeping a poll.
            if (self && !stopping) boss.notifyWorker(self);
          }
        },
      );
      workerIds.set(name, [...(workerIds.get(name) ?? []), self]);
    },
    onStop(hook) {
      stopHooks.push(hook);
    },
    async stop() {
      stopping = true;
      await Promise.all(stopHooks.splice(0).map((hook) => hook().catch(() => {})));
      await listening;
      await unlisten?.();
      await boss.stop({ graceful: true, wait: true, timeout: 5_000 } as any);
    },
  };
}
