// bench:latency's runs (latency.bench.ts): executing trivial runs through the API and reading
// their latencies back from pipeline_runs, and the bare insert + NOTIFY baseline beside them.
import pg from 'pg';
import { printStart, type StartedRun } from './latency-start';
import { fmt, pct } from './percentile';
import { dbUrl, PE, type Platform, sql } from './pipeline-support';
import type { runCost } from './run-cost';
import type { WorkerProcess } from './worker-process';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export { fmt, pct } from './percentile';

export type Lat = { running: number[]; done: number[]; api?: number[] };
export function report(label: string, l: Lat) {
  const api = l.api ? `   execute request p50 ${fmt(pct(l.api, 50))} p99 ${fmt(pct(l.api, 99))}` : '';
  console.log(
    `  ${label.padEnd(34)} execute→running p50 ${fmt(pct(l.running, 50)).padStart(7)} p99 ${fmt(pct(l.running, 99)).padStart(7)}` +
      `   execute→finished p50 ${fmt(pct(l.done, 50)).padStart(7)} p99 ${fmt(pct(l.done, 99)).padStart(7)}   (${l.done.length} runs)${api}`,
  );
}

/** The floor: insert + NOTIFY in one transaction, a listener takes the row and marks it done. */
export async function bareBaseline(dst: string, count: number, perMinute: number): Promise<Lat> {
  const url = dbUrl(dst);
  await sql(
    dst,
    'create table if not exists bare_jobs (id int primary key, state text, taken_at timestamptz)',
  );
  await sql(dst, 'truncate bare_jobs');
  const listener = new pg.Client({ connectionString: url });
  const taker = new pg.Client({ connectionString: url });
  const producer = new pg.Client({ connectionString: url });
  await Promise.all([listener.connect(), taker.connect(), producer.connect()]);
  const sent = new Map<number, number>();
  const lat: Lat = { running: [], done: [] };
  let finished = 0;
  // One statement at a time on the taker (pg deprecates queueing a query behind another).
  let taking = Promise.resolve();
  listener.on('notification', (msg) => {
    const jobId = Number(msg.payload);
    taking = taking.then(async () => {
      await taker.query(`update bare_jobs set state = 'running', taken_at = now() where id = $1`, [jobId]);
      const running = Date.now() - sent.get(jobId)!;
      await taker.query(`update bare_jobs set state = 'done' where id = $1`, [jobId]);
      lat.running.push(running);
      lat.done.push(Date.now() - sent.get(jobId)!);
      finished++;
    });
  });
  await listener.query('listen bare_jobs');
  const gap = perMinute > 0 ? 60_000 / perMinute : 0;
  const start = Date.now();
  for (let i = 0; i < count; i++) {
    const due = start + i * gap;
    if (due > Date.now()) await sleep(due - Date.now());
    sent.set(i, Date.now());
    await producer.query('begin');
    await producer.query(`insert into bare_jobs values ($1, 'queued', null)`, [i]);
    await producer.query(`select pg_notify('bare_jobs', $1)`, [String(i)]);
    await producer.query('commit');
  }
  while (finished < count) await sleep(20);
  const done = Number(
    (await producer.query(`select count(*) n from bare_jobs where state = 'done'`)).rows[0].n,
  );
  if (done !== count) throw new Error(`bare baseline: ${done} of ${count} done`);
  await Promise.all([listener.end(), taker.end(), producer.end()]);
  return lat;
}

/**
 * The bench's own look at the runs' states, on one session kept for the whole invocation
 * (named, so statement-counter.mjs leaves it out). A new session per look (pipeline-support's
 * `sql`) forked a backend every 100 ms: one at a time, that fork landed while the run it was
 * waiting for executed, on the same 2 cores (docs/benchmarks.md, 2026-11-29 "One at a time").
 * The figures come from pipeline_runs' own timestamps either way; only the interference goes.
 */
let watcher: pg.Client | null = null;
let watched = '';
async function watch<T = any>(text: string, values: unknown[]): Promise<T[]> {
  if (!watcher) {
    const c = new pg.Client({ connectionString: dbUrl(watched), application_name: 'sluice-bench' });
    await c.connect();
    watcher = c;
  }
  return (await watcher.query(text, values as any[])).rows as T[];
}

/** Which platform database `sluiceRuns` reads the runs' states from. */
export function watchStore(store: string) {
  watched = store;
}

/** Ends the watching session, if one was opened. */
export async function endWatch() {
  await watcher?.end().catch(() => {});
  watcher = null;
}

let seq = 0;
/** In-flight execute requests at most (a client keeps to its pool, as the API host does). */
const IN_FLIGHT = 8;
/**
 * Executes `count` runs at `perMinute` (open loop: the schedule does not wait for runs, only for
 * the API when IN_FLIGHT requests are pending). A 503 is retried after 100 ms, as it asks.
 */
export async function sluiceRuns(
  p: Platform,
  count: number,
  perMinute: number,
  pipeline = 'tick',
  /**
   * Worker processes held (SIGSTOP) while the runs are executed, and let go (SIGCONT) once every
   * execute has answered: the runs are all queued before any is taken, and `wallMs` runs from the
   * moment they are let go to the last run's end. The workers' throughput alone, without this
   * process's executes competing with them for the cores meanwhile.
   */
  held: WorkerProcess[] = [],
): Promise<Lat & { wallMs: number; retries: number }> {
  const sent = new Map<string, number>();
  const gap = perMinute > 0 ? 60_000 / perMinute : 0;
  for (const w of held) process.kill(w.pid, 'SIGSTOP');
  let start = Date.now();
  const pending = new Set<Promise<unknown>>();
  const api: number[] = [];
  let retries = 0;
  const execute = async (slug: string) => {
    const t0 = Date.now();
    for (;;) {
      try {
        await p.call('POST', `${PE}/pipelines/${pipeline}:execute`, { run_slug: slug });
        break;
      } catch (err) {
        if (!String(err).includes(': 503 ')) throw err;
        retries++;
        await sleep(100);
      }
    }
    api.push(Date.now() - t0);
  };
  for (let i = 0; i < count; i++) {
    const due = start + i * gap;
    if (due > Date.now()) await sleep(due - Date.now());
    while (pending.size >= IN_FLIGHT) await Promise.race(pending);
    const slug = `r${seq++}`;
    sent.set(slug, Date.now());
    const req = execute(slug).finally(() => pending.delete(req));
    pending.add(req);
  }
  try {
    await Promise.all(pending);
  } finally {
    if (held.length > 0) start = Date.now();
    for (const w of held) process.kill(w.pid, 'SIGCONT');
  }
  const slugs = [...sent.keys()];
  for (;;) {
    const [row] = await watch(
      `select count(*) filter (where state in ('succeeded','failed','canceled')) as n,
              count(*) filter (where state <> 'succeeded' and state in ('failed','canceled')) as bad
         from pipeline_runs where slug = any($1)`,
      [slugs],
    );
    if (Number(row.bad) > 0) {
      const bad = await watch(
        `select slug, state, attempt, error from pipeline_runs
          where slug = any($1) and state in ('failed','canceled') limit 5`,
        [slugs],
      );
      throw new Error(`${row.bad} runs did not succeed: ${JSON.stringify(bad)}`);
    }
    if (Number(row.n) === count) break;
    await sleep(100);
  }
  const rows = await watch(
    `select slug, extract(epoch from created_at) * 1000 as c, extract(epoch from started_at) * 1000 as s,
            extract(epoch from finished_at) * 1000 as f
       from pipeline_runs where slug = any($1)`,
    [slugs],
  );
  const lat: Lat = { running: [], done: [], api };
  let last = 0;
  const started: StartedRun[] = [];
  for (const r of rows) {
    const t0 = sent.get(r.slug)!;
    lat.running.push(Number(r.s) - t0);
    lat.done.push(Number(r.f) - t0);
    last = Math.max(last, Number(r.f));
    started.push({
      sent: t0 - start,
      created: Number(r.c) - start,
      started: Number(r.s) - start,
      finished: Number(r.f) - start,
    });
  }
  if (count > 100 && held.length === 0) printStart(started);
  return { ...lat, wallMs: last - start, retries };
}

export type RunsResult = Awaited<ReturnType<typeof sluiceRuns>>;

/** Rows in the trivial pipeline's sink: one per run of `tick`. */
export async function sinkRows(dst: string): Promise<number> {
  return Number((await sql(dst, 'select count(*)::bigint as n from ticks'))[0].n);
}

/** What latency.bench.ts's phases share: its platform, its databases, its workers and its counts. */
export type LatencyBench = {
  p: Platform;
  store: string;
  dst: string;
  /** The running workers: a phase starts and stops them; main stops any left at the end. */
  workers: WorkerProcess[];
  startWorkers(n: number, dist?: string): Promise<WorkerProcess[]>;
  cost: ReturnType<typeof runCost>;
  /** Trivial runs executed so far: each wrote one row into the sink. */
  expected: number;
};
