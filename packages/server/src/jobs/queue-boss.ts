// pg-boss's side of the queue (jobs/queue.ts): the connection it sends its statements through,
// and what it needs set before it starts.
import { createRequire } from 'node:module';
import { type SQL, sql } from 'drizzle-orm';
import type { DbOrTx, SqlExecutor, Store } from '../db/client';
import { statementName } from '../db/named';

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

/**
 * pg-boss computes its schedules (`schedule` in jobs/define.ts, all in UTC) with cron-parser,
 * whose dates are luxon's. Left to its defaults, luxon asks `Intl` for the system's locale and
 * time zone on the first date it makes, and that loads ICU's locale and time-zone data: ~8 MB
 * resident in every `serve` and `worker` from the first minute on (docs/benchmarks.md, Memory).
 * With UTC and en-US as luxon's defaults the dates are the same and `Intl` is never asked. Set on
 * the luxon that pg-boss's cron-parser loads, whichever copy that is; no other module of ours
 * uses luxon.
 */
export function luxonWithoutIntl() {
  const cronParser = createRequire(createRequire(import.meta.url).resolve('pg-boss')).resolve('cron-parser');
  const { Settings } = createRequire(cronParser)('luxon');
  Settings.defaultZone = 'utc';
  Settings.defaultLocale = 'en-US';
}

/**
 * pg-boss's connection to the store, counting its statements in flight, so a stopping queue
 * waits for them before the store closes. Once the queue has stopped, a statement still sent (a
 * handler that outlived the stop completing its job) is not sent: its job stays active, expires
 * and is retried, as when a worker process dies.
 */
export function trackedExecutor(store: Store) {
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

export type TrackedExecutor = ReturnType<typeof trackedExecutor>;
