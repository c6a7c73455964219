// What `npm run bench:latency` runs and watches beside its phases (docs/benchmarks.md, Latency):
// an API load of authenticated list requests from another process (autocannon at a fixed
// rate), the event-loop delay of the bench process (where the API host runs), and the wait
// events of the platform database's sessions (pg_stat_activity, sampled every 100 ms).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { dbUrl, repoRoot } from './pipeline-support';

export type ApiLoad = { done: Promise<ApiLoadResult> };
export type ApiLoadResult = {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
};

/**
 * autocannon in a child process (its own cores' share, not the API's event loop): `rate`
 * requests a second (0: no cap) over `connections` connections for `seconds`, each with the bearer key. A
 * connection waits for its answer before it asks again, so the rate reached is at most
 * connections ÷ mean latency (16 connections: 500 a second only while the mean stays under 32 ms).
 */
export function startApiLoad(
  /** One URL, or several (each connection keeps to one: connection i asks url i mod n). */
  url: string | string[],
  apiKey: string,
  rate: number,
  seconds: number,
  connections = 16,
): ApiLoad {
  const child = spawn(
    process.execPath,
    [
      path.join(repoRoot, 'node_modules/autocannon/autocannon.js'),
      '-c',
      String(connections),
      // No rate (0): as many as the connections get answered.
      ...(rate > 0 ? ['-R', String(rate)] : []),
      '-d',
      String(seconds),
      '-j',
      '-H',
      `authorization=Bearer ${apiKey}`,
      ...(Array.isArray(url) ? url : [url]),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => {
    out += c;
  });
  child.stderr.on('data', (c) => {
    err += c;
  });
  const done = new Promise<ApiLoadResult>((resolve, reject) => {
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${err}`));
      let r: any;
      try {
        r = JSON.parse(out);
      } catch {
        // A bailout (bad options) exits 0 with no JSON: fail the caller, whose cleanup then runs.
        return reject(new Error(`autocannon wrote no result: ${err}`));
      }
      resolve({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        total: r.requests.total,
        non2xx: r.non2xx,
        errors: r.errors,
      });
    });
  });
  return { done };
}

/** Event-loop delay of this process (the API host's) over a phase. */
export function loopDelay() {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return {
    reset: () => h.reset(),
    /** p99 and max in ms since the last reset. */
    read: () => ({ p99: h.percentile(99) / 1e6, max: h.max / 1e6 }),
    stop: () => h.disable(),
  };
}

/**
 * Runs `sql` on pg_stat_activity every `ms` from a session of the bench's own (left out of what it
 * sees by its application name) and hands each answer to `onRows`; one query at a time, and a
 * query that fails (the server busy, the session ending at stop) is a sample skipped.
 */
async function pollActivity<R>(ms: number, sql: string, params: unknown[], onRows: (rows: R[]) => void) {
  const client = new pg.Client({ connectionString: dbUrl('postgres'), application_name: 'sluice-bench' });
  await client.connect();
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      onRows((await client.query(sql, params)).rows);
    } catch {
      // skipped sample
    } finally {
      busy = false;
    }
  }, ms);
  return async () => {
    clearInterval(timer);
    await client.end();
  };
}

/**
 * Samples what the platform database's sessions (Sluice's, not the bench's own) are doing every
 * 100 ms: `active` ones by wait event (`CPU` when none: running), `idle in transaction` ones by
 * the start of their last statement (a transaction waiting for its client). `take()` returns the counts since the last take.
 */
export async function waitSampler(database: string) {
  let counts = new Map<string, number>();
  let samples = 0;
  const stop = await pollActivity<{ what: string; n: number }>(
    100,
    `select case when state = 'active' then coalesce(wait_event_type || ':' || wait_event, 'CPU')
                 else state || ' after ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 40) end as what,
            count(*)::int as n
       from pg_stat_activity
      where datname = $1 and application_name <> 'sluice-bench'
        and state in ('active', 'idle in transaction')
      group by 1`,
    [database],
    (rows) => {
      samples++;
      for (const r of rows) counts.set(r.what, (counts.get(r.what) ?? 0) + r.n);
    },
  );
  return {
    /** "what n/samples, …", most frequent first: sessions in that state per sample on average. */
    take(): string {
      const line = [...counts]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([w, n]) => `${w} ${(n / Math.max(1, samples)).toFixed(2)}`)
        .join(', ');
      counts = new Map();
      samples = 0;
      return line || 'none';
    },
    stop,
  };
}

/** The most sessions Sluice's processes held at once on each of `databases`, sampled every 200 ms. */
export async function connectionPeaks(databases: string[]) {
  const peaks = new Map<string, number>();
  const stop = await pollActivity<{ datname: string; n: number }>(
    200,
    `select datname, count(*)::int as n from pg_stat_activity
      where datname = any($1) and application_name <> 'sluice-bench' group by 1`,
    [databases],
    (rows) => {
      for (const r of rows) peaks.set(r.datname, Math.max(peaks.get(r.datname) ?? 0, r.n));
    },
  );
  return {
    async stop(): Promise<Map<string, number>> {
      await stop();
      return peaks;
    },
  };
}
