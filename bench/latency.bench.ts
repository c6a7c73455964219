// `npm run bench:latency`: how long a user waits for a run to start and to finish.
// Not a test: it prints figures; docs/benchmarks.md records them and the targets.
//
// The API runs in this process on a scratch PostgreSQL platform database; `sluice worker`
// processes (fresh, as a user starts them) claim and execute a trivial pipeline (one row from
// PostgreSQL into PostgreSQL). Every run's execute time is taken here before the request, its
// `started_at` / `finished_at` come from pipeline_runs (same host clock).
//
// Baseline in the same invocation: the bare mechanism a queue cannot beat: a transaction
// inserts a row and NOTIFYs, a listening connection takes the row (update … returning) and
// marks it done; execute → running is insert → taken.
//
//   BENCH_ONE_RUNS=20             runs of the one-at-a-time phase
//   BENCH_LATENCY_SECONDS=30      length of the 3,000 runs/min phases
//   BENCH_LATENCY_RATE=3000       runs per minute in those phases
//   BENCH_API_RATE=500            authenticated list requests a second served beside the rate in
//                                 its second phase (autocannon in another process)
//   BENCH_API_CONNECTIONS=16      autocannon's connections: each waits for its answer, so they cap
//                                 the rate reached at connections ÷ mean latency
//   BENCH_API_LIST=runs           which list: `runs` (the environment's runs, 20 with their
//                                 steps) or `events` (the organization's events, 20)
//   BENCH_LATENCY_HIGH_RATE=6000  runs per minute of the sustained phase (BENCH_LATENCY_SECONDS)
//   BENCH_RATED_WARMUP=0          runs executed at once a second before each rated phase, not
//                                 counted in its figures nor in its cost per run: the phase then
//                                 starts on workers, sessions and backends a burst has just used
//                                 (its figures are then not the issue's; its targets line says so)
//   BENCH_PHASES=one,rated,api,high,scale   the phases run, in this order
//   --scale-out                   only the scale-out phase, with BENCH_SCALE=1,2,4,8 and
//                                 BENCH_CONCURRENCY=2 unless set (`npm run bench:scale`): a
//                                 simulated many-host deployment, each worker process its own pool
//   BENCH_WORKERS=2               worker processes; BENCH_CONCURRENCY=4 runs at once in each
//   BENCH_SCALE=1,2,4             worker counts for the runs/min saturation figure ('' skips it)
//                                 Each measurement queues its runs while the workers are held
//                                 (SIGSTOP), then lets them go (SIGCONT) and times them from there
//                                 to the last run's end: the workers' throughput, not this
//                                 process's executes competing with them for the cores (before
//                                 2026-11-29 12:10 the executes ran beside the workers, 8 at once)
//   BENCH_SCALE_RUNS=600          COLD: runs queued at once for freshly started worker processes
//                                 (what the first minutes after a start give: each process compiles
//                                 its run path and its backends fill their caches meanwhile)
//   BENCH_SCALE_STEADY_RUNS=1200  STEADY: runs queued at once right after, on the same processes
//                                 (warm: what a deployment's long-running workers give). Both are
//                                 printed; issue 26 item 3's target is judged on STEADY ('0' skips)
//   BENCH_SCALE_STEADY_AFTER=600  runs each worker process has run before STEADY is measured (the
//                                 cold runs count; the rest run uncounted, e.g. 1,800 more at 4
//                                 workers): every count measured equally warm
//   BENCH_SCALE_PREWARM=600       runs on a throwaway worker before the first measurement, so the
//                                 API host in this process and the store are warm for all of them
//                                 (else the first measurement, 1 worker, paid for warming them)
//   BENCH_SCALE_ROUNDS=4          rounds of those measurements, in ascending then descending order
//                                 of workers (the machine's load drifts: each count is measured
//                                 early and late, and its runs/min is over all its rounds; the
//                                 ratio of each round is printed beside, to show the spread; with
//                                 a baseline, an even number puts each build first equally often)
//   BENCH_SCALE_ROWS=20000        rows per run of the scale-out rows/s pipeline (PG → PG copy)
//   BENCH_SCALE_ROW_RUNS=8        such runs queued at once per worker count
//   BENCH_SCALE_WARM=0            runs per worker process executed (and not counted) before each
//                                 measurement: without, a fresh process compiles the run path
//                                 while it is measured, once per process
//   BENCH_WORKERS_FROM=dir        every phase's workers from the compiled CLI build in dir (as
//                                 BENCH_SCALE_BASELINE's), e.g. to time the latency phases of a
//                                 baseline's workers in the minutes next to this checkout's
//   BENCH_SCALE_BASELINE=dir      A/B: each worker count is measured twice, with workers of the
//                                 compiled CLI build in dir (a copy of packages/cli/dist made from
//                                 the baseline's sources, e.g. packages/cli/.dist-main) and with
//                                 this checkout's, in alternating order; both tables and their
//                                 ratio are printed
//   BENCH_CPU_PROF=dir            write V8 CPU profiles of the workers into dir
//   BENCH_KEEP_STORE=1            keep the platform store (its name is printed) to look at its plans after
//   BENCH_WORKER_POOL=n           the workers' SLUICE_DB_POOL_SIZE (their pool is at most that and
//                                 max(3, ⌈C / 2⌉ + 1), packages/cli/src/commands/worker.ts)
//   BENCH_NODE_ARGS='--flag …'    more node options for the workers (e.g. `--perf-basic-prof`
//                                 for `perf record`, V8's `--log-deopt`)
//   BENCH_STATEMENT_LOG=file      append every counted statement (pid, database, time, session,
//                                 text) and its answer to file: where a run's statements and
//                                 waits go (statement-counter.mjs); with BENCH_PHASES=one,
//                                 `npx tsx bench/statement-timeline.ts file` prints a run's
//                                 steps' medians
//   BENCH_DATA_DELAY_MS=0         the data source (`target-db`) behind a loopback proxy that
//                                 holds each chunk this long each way (bench/delay-proxy.ts): a
//                                 run's data statements as against a server 2 × that away
//   BENCH_TICK=incremental        the trivial pipeline reads its row through a cursor (a bound
//                                 template and cursor_column: the source's cursor path)
//   BENCH_PG_LOG=1                log every statement on the platform database (server log, with
//                                 its duration) to profile where the time goes
//   BENCH_PGBOUNCER=listen|poll   the API and the workers reach the platform database through
//                                 Debian's PgBouncer in transaction mode (test/peers/pgbouncer.ts,
//                                 SLUICE_DB_POOLER=transaction, docs/operations.md "Behind
//                                 PgBouncer"): `listen` keeps LISTEN on DATABASE_DIRECT_URL, `poll`
//                                 has no direct URL (the queue polls every 0.5 s). The baseline
//                                 and the bench's own reads stay direct.
//
// Beside the latencies each phase prints its cost per run: statements sent through `pg` (by the
// API in this process and by the workers: statement-counter.mjs), committed transactions on the
// platform and the data database and new data-database sessions (pg_stat_database deltas), and
// CPU time of the workers and of this process (API + load generator).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import './statement-counter.mjs';
import { type PgBouncerPeer, startPgBouncer } from '../test/peers/pgbouncer';
import { type DelayProxy, startDelayProxy } from './delay-proxy';
import { onePhase, ratedPhases } from './latency-phases';
import { endWatch, type LatencyBench, sinkRows, watchStore } from './latency-runs';
import { scalePhase } from './latency-scale';
import {
  ADMIN_URL,
  createDatabase,
  dbUrl,
  deployCopyPipeline,
  dropDatabase,
  loadAverages,
  openPlatform,
  PE,
  type Platform,
  setUpTick,
  sql,
} from './pipeline-support';
import { runCost } from './run-cost';
import { startWorker, type WorkerProcess } from './worker-process';

const SCALE_ONLY = process.argv.includes('--scale-out');
const SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 30);
const ONE_RUNS = Number(process.env.BENCH_ONE_RUNS ?? 20);
const RATE = Number(process.env.BENCH_LATENCY_RATE ?? 3000);
const API_RATE = Number(process.env.BENCH_API_RATE ?? 500);
const API_CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 16);
const API_LIST = process.env.BENCH_API_LIST ?? 'runs';
if (!['runs', 'events'].includes(API_LIST)) throw new Error('BENCH_API_LIST is runs or events');
const API_PATH = API_LIST === 'runs' ? `${PE}/runs?limit=20` : '/organizations/acme/events?limit=20';
const HIGH_RATE = Number(process.env.BENCH_LATENCY_HIGH_RATE ?? 6000);
const PHASES = new Set(
  (process.env.BENCH_PHASES ?? (SCALE_ONLY ? 'scale' : 'one,rated,api,high,scale')).split(','),
);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? (SCALE_ONLY ? 2 : 4));
const SCALE = (process.env.BENCH_SCALE ?? (SCALE_ONLY ? '1,2,4,8' : '1,2,4'))
  .split(',')
  .filter(Boolean)
  .map(Number);
const SCALE_RUNS = Number(process.env.BENCH_SCALE_RUNS ?? 600);
const SCALE_ROWS = Number(process.env.BENCH_SCALE_ROWS ?? 20_000);
const SCALE_ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 4);
const SCALE_ROW_RUNS = Number(process.env.BENCH_SCALE_ROW_RUNS ?? 8);
const SCALE_WARM = Number(process.env.BENCH_SCALE_WARM ?? 0);
const SCALE_STEADY_RUNS = Number(process.env.BENCH_SCALE_STEADY_RUNS ?? 1200);
const SCALE_PREWARM = Number(process.env.BENCH_SCALE_PREWARM ?? 600);
const SCALE_STEADY_AFTER = Number(process.env.BENCH_SCALE_STEADY_AFTER ?? 600);
const SCALE_BASELINE = process.env.BENCH_SCALE_BASELINE ?? '';
const WORKERS_FROM = process.env.BENCH_WORKERS_FROM || undefined;
const PGBOUNCER = process.env.BENCH_PGBOUNCER ?? '';
if (!['', 'listen', 'poll'].includes(PGBOUNCER)) throw new Error('BENCH_PGBOUNCER is listen or poll');
const DATA_DELAY_MS = Number(process.env.BENCH_DATA_DELAY_MS ?? 0);
const TICK = process.env.BENCH_TICK ?? '';
if (!['', 'incremental'].includes(TICK)) throw new Error('BENCH_TICK is incremental or unset');
const PROF = [
  ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
  ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
];

const id = `${process.pid}`;
const STORE = `sluice_bench_lat_store_${id}`;
const DST = `sluice_bench_lat_dst_${id}`;
const masterKey = crypto.randomBytes(32).toString('base64');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-latency-'));
const statsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-latency-stats-'));
process.env.BENCH_STATS_DIR = statsDir;
const COUNTER = ['--import', new URL('./statement-counter.mjs', import.meta.url).href];
const load = loadAverages;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
watchStore(STORE);

let bouncer: PgBouncerPeer | null = null;
let delayProxy: DelayProxy | null = null;
/** How the API and the workers reach the platform database: directly, or through the pooler. */
function storeEnv(): Record<string, string> {
  if (!bouncer) return { DATABASE_URL: dbUrl(STORE) };
  return {
    DATABASE_URL: bouncer.urlFor(dbUrl(STORE)),
    SLUICE_DB_POOLER: 'transaction',
    ...(PGBOUNCER === 'listen' ? { DATABASE_DIRECT_URL: dbUrl(STORE) } : {}),
  };
}

async function startWorkers(n: number, dist?: string): Promise<WorkerProcess[]> {
  const env: Record<string, string> = {
    ...storeEnv(),
    SLUICE_MASTER_KEY: masterKey,
    SLUICE_DATA_DIR: dataDir,
  };
  if (process.env.BENCH_WORKER_POOL) env.SLUICE_DB_POOL_SIZE = process.env.BENCH_WORKER_POOL;
  return Promise.all(
    Array.from({ length: n }, () =>
      startWorker(env, [...COUNTER, ...PROF], ['--concurrency', String(CONCURRENCY)], dist ?? WORKERS_FROM),
    ),
  );
}

const cost = runCost({
  statsDir,
  platformDb: STORE,
  dataDb: DST,
});

async function main() {
  const cpus = os.cpus();
  console.log(
    `node ${process.version}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}; ${WORKERS} workers × concurrency ` +
      `${CONCURRENCY}; ${RATE} runs/min for ${SECONDS} s; load average ${load()}`,
  );
  for (const db of [STORE, DST]) await createDatabase(db);
  if (PGBOUNCER) {
    // More server connections than the API's pool and the workers' together: the pooler is
    // measured, not a queue in front of a too-small pool.
    bouncer = await startPgBouncer({ serverUrl: dbUrl('postgres'), poolSize: 40 });
    console.log(
      `platform database through PgBouncer 1.18 (transaction mode, port ${bouncer.port}), ` +
        `${PGBOUNCER === 'listen' ? 'LISTEN on the direct URL' : 'no direct URL: the queue polls every 0.5 s'}`,
    );
  }
  if (process.env.BENCH_PG_LOG) {
    await sql('postgres', `alter database ${STORE} set log_min_duration_statement = 0`);
  }
  let p: Platform | null = null;
  let b: LatencyBench | null = null;
  try {
    await sql(DST, 'create table ticks (n integer)');
    // The rows/s pipeline: a real copy of SCALE_ROWS rows × 6 columns per run.
    await sql(
      DST,
      `create table src_rows as
         select i as id, 'name ' || i as name, (i * 7919 % 100000) / 100.0 as amount,
                timestamptz '2024-01-01' + i * interval '1 second' as created_at, i % 3 = 0 as active,
                md5(i::text) as note
           from generate_series(1, ${SCALE_ROWS}) i`,
    );
    await sql(
      DST,
      `create table copy_rows (id integer, name text, amount numeric, created_at timestamptz,
                               active boolean, note text)`,
    );
    p = await openPlatform({
      ...storeEnv(),
      SLUICE_MASTER_KEY: masterKey,
      SLUICE_DATA_DIR: dataDir,
      // 3,000 executes a minute from one key would otherwise measure 429s.
      SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
    });
    if (DATA_DELAY_MS > 0) {
      const u = new URL(ADMIN_URL);
      delayProxy = await startDelayProxy({ host: u.hostname, port: Number(u.port || 5432) }, DATA_DELAY_MS);
      console.log(`data source behind a proxy that holds each chunk ${DATA_DELAY_MS} ms each way`);
    }
    if (TICK)
      console.log('the trivial pipeline reads its row incrementally (a bound template, cursor_column)');
    await setUpTick(p, DST, 'acme', { incremental: TICK === 'incremental', port: delayProxy?.port });
    await deployCopyPipeline(
      p,
      'copy',
      { ref: 'target-db', table: 'src_rows' },
      { ref: 'target-db', table: 'copy_rows' },
    );

    // The platform database's size before any run: what the runs add is their stored bytes.
    const storeBytes = async () =>
      Number((await sql(STORE, 'select pg_database_size(current_database()) as b'))[0].b);
    const emptyBytes = await storeBytes();
    b = { p, store: STORE, dst: DST, workers: [], startWorkers, cost, expected: 0 };
    const latencyPhases = ['one', 'rated', 'api', 'high'].some((ph) => PHASES.has(ph));
    if (latencyPhases) {
      b.workers = await startWorkers(WORKERS);
      await sleep(1000);
    }
    if (PHASES.has('one')) await onePhase(b, ONE_RUNS);
    await ratedPhases(b, {
      phases: PHASES,
      seconds: SECONDS,
      rate: RATE,
      apiRate: API_RATE,
      highRate: HIGH_RATE,
      apiList: API_LIST,
      apiPath: API_PATH,
      apiConnections: API_CONNECTIONS,
      warmup: Number(process.env.BENCH_RATED_WARMUP ?? 0),
    });
    for (const w of b.workers) await w.stop();
    b.workers = [];

    let copied = 0;
    if (PHASES.has('scale') && SCALE.length > 0) {
      copied = await scalePhase(b, {
        counts: SCALE,
        runs: SCALE_RUNS,
        rows: SCALE_ROWS,
        rounds: SCALE_ROUNDS,
        rowRuns: SCALE_ROW_RUNS,
        warm: SCALE_WARM,
        steadyRuns: SCALE_STEADY_RUNS,
        prewarm: SCALE_PREWARM,
        steadyAfter: SCALE_STEADY_AFTER,
        baseline: SCALE_BASELINE,
        concurrency: CONCURRENCY,
      });
    }
    const copiedRows = Number((await sql(DST, 'select count(*)::bigint as n from copy_rows'))[0].n);
    if (copiedRows !== copied) throw new Error(`copy_rows holds ${copiedRows} rows, expected ${copied}`);
    const expected = b.expected;
    const loaded = await sinkRows(DST);
    if (loaded !== expected) throw new Error(`the sink holds ${loaded} rows, expected ${expected}`);
    // Runs, their steps, log lines, events and queue jobs as stored (completed jobs stay in
    // pg-boss's table until its retention; no vacuum ran in between).
    console.log(
      `\nplatform database: ${(((await storeBytes()) - emptyBytes) / Math.max(1, expected)).toFixed(0)} bytes ` +
        `stored per run (${expected} runs; tables, indexes and TOAST, nothing deleted yet)`,
    );
    console.log(
      `rows checked: ${loaded} trivial runs, ${loaded} rows in their sink; ${copiedRows} copied rows; load average ${load()}`,
    );
  } finally {
    cost.stop();
    await endWatch();
    for (const w of b?.workers ?? []) await w.stop().catch(() => {});
    await p?.close().catch(() => {});
    await bouncer?.close().catch(() => {});
    await delayProxy?.close();
    if (process.env.BENCH_KEEP_STORE === '1') console.log(`kept the platform store ${STORE}`);
    else for (const db of [STORE, DST]) await dropDatabase(db).catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(statsDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
