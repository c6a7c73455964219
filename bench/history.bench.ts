// `npm run bench:history`: does the cost of a request grow with the history in the store?
// Not a test: it prints figures; docs/benchmarks.md records them and the target (issue 26 item 4:
// each path's p99 on the seeded store within 1.2× of the same path on an empty store).
//
// Two scratch PostgreSQL platform databases set up alike through the API (one project, one
// environment, ten pipelines, `tick` deployed: one row from PostgreSQL into PostgreSQL); one of
// them is then seeded in SQL with generate_series: runs of the ten pipelines over the last 180
// days with their log lines, and events over the last 27 days (inside the 30-day retention). The
// history partitions those times need are created first, as the hourly retention step would have.
// The keys and indexes no foreign key uses are dropped for the load and built again after it (the
// bench checks every definition is as before), then the tables are vacuumed and analyzed.
// Both APIs run in this process (in-process requests), one `sluice worker` per store. Requests
// alternate between the two stores, each pair starting with the other store in turn, so the load
// other processes put on the machine (and this process's collections) falls on both. Per path it
// prints where the slowest 1% went (collections, store round trips, blocks read, checkpoints), and
// beside each p99 ratio the 5th–95th percentile of the ratio over resamples of the requests.
//
//   BENCH_HISTORY_RUNS=10000000        seeded runs
//   BENCH_HISTORY_LOG_LINES=100000000  seeded run log lines (spread evenly over the runs)
//   BENCH_HISTORY_EVENTS=10000000      seeded events
//   BENCH_HISTORY_REQUESTS=5000        requests per list path and store (p99: the 50th-slowest)
//   BENCH_HISTORY_EXECUTES=300         runs executed one at a time per store
//   BENCH_HISTORY_SEED_CONNECTIONS=2   sessions the seeding chunks and index builds are spread over
//   BENCH_HISTORY_KEEP=1               keep the seeded database (its name is printed) and what
//                                      another invocation needs to reuse it (/tmp/<name>.json)
//   BENCH_HISTORY_REUSE=<name>         measure on a store an earlier invocation kept instead of
//                                      seeding one (its sizes are the kept ones; kept again)
//   BENCH_HISTORY_DRAW=<n>             which seeded runs and entities are drawn (default: the
//                                      process id, so a reused store's pages are not the ones
//                                      an earlier invocation read)
//   BENCH_HISTORY_SEMI_SPACE_MB=512    V8's young generation of this process (0: V8's default)
//
// The young generation: both APIs and the bench share this process, and with V8's default (16 MB
// semi-spaces) a scavenge came every 15–70 requests, 4–55 ms each, so the p99 of 1,000 requests
// (the 10th-slowest) fell where requests hit by a pause give way to those that are not, on either
// store by chance (docs/benchmarks.md "What makes the p99 tail of bench:history"). With larger
// semi-spaces the same work is collected in fewer, longer pauses that hit well under 1% of the
// requests; every collection is still printed per path, with the requests it overlapped.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import pg from 'pg';
import {
  ensurePartitions,
  eventsHistory,
  type HistoryTable,
  runLogsHistory,
} from '../packages/server/src/db/partitions';
import {
  createDatabase,
  dbUrl,
  deployPipeline,
  dropDatabase,
  openPlatform,
  PE,
  type Platform,
  setUpTick,
  sql,
  startWorker,
  type WorkerProcess,
} from './pipeline-support';

const SEMI_SPACE_MB = Number(process.env.BENCH_HISTORY_SEMI_SPACE_MB ?? 512);
if (SEMI_SPACE_MB > 0 && !process.execArgv.some((a) => a.startsWith('--max-semi-space-size'))) {
  // The flag sizes the heap at start, so this process runs itself again with it.
  const r = spawnSync(
    process.execPath,
    // From the start: V8 grows the young generation from 1 MB only as scavenges go by.
    [
      ...process.execArgv,
      `--min-semi-space-size=${SEMI_SPACE_MB}`,
      `--max-semi-space-size=${SEMI_SPACE_MB}`,
      ...process.argv.slice(1),
    ],
    { stdio: 'inherit' },
  );
  process.exit(r.status ?? 1);
}

/** What an invocation with BENCH_HISTORY_KEEP=1 leaves for another to measure on the same store. */
type Kept = {
  seeded: string;
  dst: string;
  masterKey: string;
  apiKey: string;
  runs: number;
  logLines: number;
  events: number;
};
const keptFile = (name: string) => path.join(os.tmpdir(), `${name}.json`);
const REUSE = process.env.BENCH_HISTORY_REUSE;
const kept: Kept | undefined = REUSE ? JSON.parse(fs.readFileSync(keptFile(REUSE), 'utf8')) : undefined;
const KEEP = !!process.env.BENCH_HISTORY_KEEP || !!kept;

const RUNS = kept?.runs ?? Number(process.env.BENCH_HISTORY_RUNS ?? 10_000_000);
const LOG_LINES = kept?.logLines ?? Number(process.env.BENCH_HISTORY_LOG_LINES ?? 100_000_000);
const EVENTS = kept?.events ?? Number(process.env.BENCH_HISTORY_EVENTS ?? 10_000_000);
const DRAW = Number(process.env.BENCH_HISTORY_DRAW ?? process.pid);
// 5,000: at 1,000 the p99 (the 10th-slowest) of unchanged code moved between 0.7 and 2.3 of the
// empty store's from one invocation to the next (docs/benchmarks.md "History at 10M runs").
const REQUESTS = Number(process.env.BENCH_HISTORY_REQUESTS ?? 5000);
const EXECUTES = Number(process.env.BENCH_HISTORY_EXECUTES ?? 300);
const PIPELINES = 10;
const RUN_DAYS = 180;
const EVENT_DAYS = 27;
const CHUNK = 500_000;
const SEED_CONNECTIONS = Number(process.env.BENCH_HISTORY_SEED_CONNECTIONS ?? 2);

const id = `${process.pid}`;
const EMPTY = `sluice_bench_hist_empty_${id}`;
const SEEDED = kept?.seeded ?? `sluice_bench_hist_seeded_${id}`;
const DST = kept?.dst ?? `sluice_bench_hist_dst_${id}`;
const masterKey = kept?.masterKey ?? crypto.randomBytes(32).toString('base64');
// Runs this invocation executes, by a prefix of its own (a reused store has an earlier one's).
const mine = (kind: 'x' | 'f', i: number) => `${kind}${id}n${i}`;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-history-'));
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const n = (x: number) => x.toLocaleString('en-US');

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
}

/**
 * The 5th and 95th percentiles of the p99 ratio over resamples of both stores' requests (drawn
 * with replacement, 1,000 times, a fixed seed): with 1,000 requests a p99 is the 10th-slowest,
 * and how far it moves between invocations of the same code is what this interval shows.
 */
function ratioInterval(e: number[], s: number[]): [number, number] {
  let x = 0x9e3779b9;
  const rnd = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const draw = (v: number[]) => Array.from(v, () => v[Math.floor(rnd() * v.length)] as number);
  const ratios: number[] = [];
  for (let b = 0; b < 1000; b++) ratios.push(pct(draw(s), 99) / pct(draw(e), 99));
  return [pct(ratios, 5), pct(ratios, 95)];
}

type Store = { name: string; p: Platform; worker: WorkerProcess; client: pg.Client; reused: boolean };

/** A new store set up through the API, or (`apiKey`) a kept one as it was left. */
async function openStore(name: string, apiKey?: string): Promise<Store> {
  if (!apiKey) await createDatabase(name);
  const p = await openPlatform(
    {
      DATABASE_URL: dbUrl(name),
      SLUICE_MASTER_KEY: masterKey,
      SLUICE_DATA_DIR: dataDir,
      SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
    },
    apiKey,
  );
  if (!apiKey) {
    await setUpTick(p, DST);
    for (let i = 1; i < PIPELINES; i++) {
      await p.call('POST', '/organizations/acme/projects/bench/pipelines', { name: `p${i}`, slug: `p${i}` });
    }
  }
  const worker = await startWorker({
    DATABASE_URL: dbUrl(name),
    SLUICE_MASTER_KEY: masterKey,
    SLUICE_DATA_DIR: dataDir,
  });
  const client = new pg.Client({ connectionString: dbUrl(name), application_name: 'sluice-bench' });
  await client.connect();
  return { name, p, worker, client, reused: !!apiKey };
}

/** Partitions for every period from `since` on, as the hourly step would have made them. */
async function partitionsSince(s: Store, h: HistoryTable, since: Date) {
  for (let t = since.getTime(); t <= Date.now(); t += 7 * 86_400_000) {
    await ensurePartitions(s.p.rt.deps.db, { ...h, ahead: 0 }, new Date(t));
  }
  await ensurePartitions(s.p.rt.deps.db, h, new Date());
}

/** Keys and indexes of the seeded tables and their partitions, and the constraints on them. */
async function schemaOf(c: pg.Client): Promise<string[]> {
  const { rows } = await c.query(
    `with t as (select relid from unnest(array['pipeline_runs','pipeline_run_logs','events']) p,
                       lateral pg_partition_tree(p::regclass))
     select 'index ' || x.indexrelid::regclass || ': ' || pg_get_indexdef(x.indexrelid) as d
       from pg_index x where x.indrelid in (select relid from t)
     union all
     select 'constraint ' || conrelid::regclass || '.' || conname || ': ' || pg_get_constraintdef(oid)
       from pg_constraint where conrelid in (select relid from t)
     order by 1`,
  );
  return rows.map((r) => r.d as string);
}

type Deferred = { table: string; drop: string; create: string };

/**
 * The keys and indexes on the seeded tables that no foreign key depends on (dropping a parent's
 * index drops its partitions' ones), to be built once after the rows are in: one sort each
 * instead of one insert per row. The runs' primary key stays (the run log's foreign key uses it).
 */
async function deferredIndexes(c: pg.Client): Promise<Deferred[]> {
  const { rows } = await c.query(
    `select c.relname as t, i.relname as i, pg_get_indexdef(x.indexrelid) as def,
            con.conname as con, pg_get_constraintdef(con.oid) as condef
       from pg_index x
       join pg_class i on i.oid = x.indexrelid
       join pg_class c on c.oid = x.indrelid
       left join pg_constraint con on con.conindid = x.indexrelid and con.conrelid = c.oid
      where c.relname in ('pipeline_runs','pipeline_run_logs','events')
        and c.relnamespace = current_schema()::regnamespace
        and not exists (select 1 from pg_constraint f where f.contype = 'f' and f.conindid = x.indexrelid)
      order by c.relname, i.relname`,
  );
  return rows.map((r) =>
    r.con
      ? {
          table: r.t,
          drop: `alter table "${r.t}" drop constraint "${r.con}"`,
          create: `alter table "${r.t}" add constraint "${r.con}" ${r.condef}`,
        }
      : // A partitioned table's index is printed `ON ONLY` the parent: built so, it would cover no partition.
        { table: r.t, drop: `drop index "${r.i}"`, create: (r.def as string).replace(' ON ONLY ', ' ON ') },
  );
}

/** Runs `tasks` on `clients`, each client taking the next task when its last one is done. */
async function onEach<T>(clients: pg.Client[], tasks: T[], run: (c: pg.Client, t: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    clients.map(async (c) => {
      while (next < tasks.length) await run(c, tasks[next++] as T);
    }),
  );
}

async function seed(s: Store) {
  const [ids] = (
    await s.client.query(
      `select o.id as org, e.id as env, array_agg(pl.id order by pl.slug) as pipelines
         from organizations o join environments e on e.organization_id = o.id
         join pipelines pl on pl.organization_id = o.id
        where o.slug = 'acme' and e.slug = 'bench' group by o.id, e.id`,
    )
  ).rows;
  await partitionsSince(s, runLogsHistory, new Date(Date.now() - (RUN_DAYS + 1) * 86_400_000));
  await partitionsSince(s, eventsHistory, new Date(Date.now() - (EVENT_DAYS + 1) * 86_400_000));
  const before = await schemaOf(s.client);
  const deferred = await deferredIndexes(s.client);
  const { rows: leaves } = await s.client.query(
    `select relid::regclass::text as t from unnest(array['pipeline_run_logs','events']) p,
            lateral pg_partition_tree(p::regclass) where isleaf`,
  );
  const leafNames = ['pipeline_runs', ...leaves.map((r) => r.t as string)];
  // The seeding sessions: no wait for each commit's flush, the foreign-key triggers off (every
  // log line's run is the one inserted beside it in the same statement; the constraint itself
  // stays), room to sort in. Autovacuum is held off the tables being filled until the explicit
  // VACUUM at the end, which a store of this age would have had many times.
  const clients: pg.Client[] = [];
  for (let i = 0; i < SEED_CONNECTIONS; i++) {
    const c = new pg.Client({ connectionString: dbUrl(s.name), application_name: 'sluice-bench' });
    await c.connect();
    await c.query(
      `set synchronous_commit = off; set session_replication_role = replica;
       set maintenance_work_mem = '512MB'`,
    );
    clients.push(c);
  }
  const perRun = Math.max(0, Math.round(LOG_LINES / Math.max(1, RUNS)));
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  try {
    for (const t of leafNames) await s.client.query(`alter table ${t} set (autovacuum_enabled = false)`);
    for (const d of deferred) await s.client.query(d.drop);
    type Chunk = { kind: 'runs' | 'events'; lo: number; hi: number };
    const chunks: Chunk[] = [];
    for (let lo = 1; lo <= RUNS; lo += CHUNK)
      chunks.push({ kind: 'runs', lo, hi: Math.min(RUNS, lo + CHUNK - 1) });
    for (let lo = 1; lo <= EVENTS; lo += CHUNK)
      chunks.push({ kind: 'events', lo, hi: Math.min(EVENTS, lo + CHUNK - 1) });
    let runsIn = 0;
    let eventsIn = 0;
    await onEach(clients, chunks, async (c, k) => {
      if (k.kind === 'runs') {
        // Runs lo..hi evenly over RUN_DAYS up to an hour ago, with their log lines: 1 in 50
        // failed, 1 in 97 canceled, 1 in 10 started by the API, the rest by a schedule.
        await c.query(
          `with r as (
             insert into pipeline_runs (organization_id, pipeline_id, environment_id, slug, spec_hash, state,
                                        trigger, trigger_slug, started_at, finished_at, created_at, updated_at)
             select $1, ($3::uuid[])[1 + i % ${PIPELINES}], $2, 'h' || i, 'seeded',
                    case when i % 50 = 0 then 'failed' when i % 97 = 0 then 'canceled' else 'succeeded' end,
                    case when i % 10 = 0 then 'api' else 'schedule' end,
                    case when i % 10 = 0 then null else 'nightly' end,
                    t, t + interval '2 seconds', t, t + interval '2 seconds'
               from generate_series($4::int, $5::int) i,
                    lateral (select now() - interval '1 hour'
                                    - make_interval(secs => ($6::int - i)::float8 * ${RUN_DAYS * 86400} / $6::int) as t) x
             returning id, slug, created_at)
           insert into pipeline_run_logs (run_id, seq, step_slug, level, message, at)
           select r.id, s, case when s % 2 = 0 then 'load' else 'one' end, 'info',
                  'seeded line ' || s || ' of run ' || r.slug, r.created_at + s * interval '10 ms'
             from r, generate_series(1, ${perRun}) s`,
          [ids.org, ids.env, ids.pipelines, k.lo, k.hi, RUNS],
        );
        runsIn += k.hi - k.lo + 1;
      } else {
        await c.query(
          `insert into events (organization_id, slug, event_class, actor_type, actor_slug, entity_type,
                               entity_slug, action, request_id, occurred_at, metadata)
           select $1, 'evs' || i, case when i % 10 = 0 then 'security_audit' else 'activity' end,
                  'api_key', 'bench-key', 'pipeline_run', 'h' || i, 'update', 'req-' || i,
                  now() - interval '1 minute' - make_interval(secs => ($4::int - i)::float8 * ${EVENT_DAYS * 86400} / $4::int),
                  '{"state":"succeeded"}'
             from generate_series($2::int, $3::int) i`,
          [ids.org, k.lo, k.hi, EVENTS],
        );
        eventsIn += k.hi - k.lo + 1;
      }
      process.stdout.write(
        `\r  seeded ${n(runsIn)} runs, ${n(runsIn * perRun)} log lines, ${n(eventsIn)} events (${elapsed()})`,
      );
    });
    const loadS = (performance.now() - started) / 1000;
    // Largest first, so the two sessions finish about together.
    await onEach(
      clients,
      [...deferred].sort((a, b) => weight[b.table] - weight[a.table]),
      async (c, d) => {
        await c.query(d.create);
      },
    );
    const indexS = (performance.now() - started) / 1000 - loadS;
    await onEach(clients, leafNames, async (c, t) => {
      await c.query(`alter table ${t} reset (autovacuum_enabled)`);
      await c.query(`vacuum ${t}`);
    });
    await onEach(clients, ['pipeline_runs', 'pipeline_run_logs', 'events'], async (c, t) => {
      await c.query(`analyze ${t}`);
    });
    // Written out now, not by a checkpoint spread over the measurement.
    await s.client.query('checkpoint');
    const vacuumS = (performance.now() - started) / 1000 - loadS - indexS;
    const after = await schemaOf(s.client);
    if (JSON.stringify(after) !== JSON.stringify(before)) {
      throw new Error(
        `seeded schema differs:\n${after.filter((d) => !before.includes(d)).join('\n')}\n---\n${before.filter((d) => !after.includes(d)).join('\n')}`,
      );
    }
    console.log(
      `\n  seed ${elapsed()}: rows ${loadS.toFixed(0)} s, ${deferred.length} keys and indexes ${indexS.toFixed(0)} s, ` +
        `vacuum analyze ${vacuumS.toFixed(0)} s (${SEED_CONNECTIONS} sessions; keys and indexes as before: ${after.length} definitions)`,
    );
  } finally {
    for (const c of clients) await c.end();
  }
}

/** The run log's indexes first: they cover ten times the rows. */
const weight: Record<string, number> = { pipeline_run_logs: 3, pipeline_runs: 2, events: 1 };

async function sizes(s: Store): Promise<string> {
  const { rows } = await s.client.query(
    `select t, pg_size_pretty(sum(pg_total_relation_size(relid))) as size
       from unnest(array['pipeline_runs','pipeline_run_logs','events']) t,
            lateral (select relid from pg_partition_tree(t::regclass) union select t::regclass) p
      group by t order by t`,
  );
  const [{ db }] = (await s.client.query(`select pg_size_pretty(pg_database_size(current_database())) as db`))
    .rows;
  return `database ${db}; ${rows.map((r) => `${r.t} ${r.size}`).join(', ')}`;
}

/** Runs `tick` to the end; execute request → finished_at (store clock, same host). */
async function executeOnce(s: Store, slug: string, pipeline = 'tick', state = 'succeeded'): Promise<number> {
  const t0 = Date.now();
  await s.p.call('POST', `${PE}/pipelines/${pipeline}:execute`, { run_slug: slug });
  for (;;) {
    const { rows } = await s.client.query(
      // By (organization, slug), the unique index: a slug alone would scan every run.
      `select state, extract(epoch from finished_at) * 1000 as f from pipeline_runs
        where organization_id = (select id from organizations where slug = 'acme') and slug = $1`,
      [slug],
    );
    if (rows[0]?.f) {
      if (rows[0].state !== state) throw new Error(`${s.name} ${slug}: ${rows[0].state}`);
      return Number(rows[0].f) - t0;
    }
    await sleep(5);
  }
}

// Where a slow request's time went: the garbage collections of this process (both APIs and the
// bench share it) and the platform-store round trips (every pg.Client query of this process,
// timed from the call to its result) that overlap the request. Observing costs a few
// microseconds a request, on both stores alike.
type Span = { start: number; end: number };
const gcs: (Span & { kind: number })[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    gcs.push({ start: e.startTime, end: e.startTime + e.duration, kind: (e as any).detail?.kind ?? 0 });
}).observe({ entryTypes: ['gc'] });
/** The collections between two times by kind (V8's: 1 scavenge, 2 mark-compact, 4 incremental, 8 weak callbacks). */
function gcSummary(a: number, b: number): string {
  const by = new Map<number, number[]>();
  for (const g of gcs)
    if (g.start >= a && g.start < b) by.set(g.kind, [...(by.get(g.kind) ?? []), g.end - g.start]);
  return [...by]
    .sort((x, y) => x[0] - y[0])
    .map(
      ([k, v]) => `kind ${k}: ${v.length}× p50 ${pct(v, 50).toFixed(1)} max ${Math.max(...v).toFixed(1)} ms`,
    )
    .join(', ');
}
const queries: Span[] = [];
const origQuery = pg.Client.prototype.query as (...a: any[]) => any;
(pg.Client.prototype as any).query = function (this: pg.Client, ...args: any[]) {
  const start = performance.now();
  const done = () => queries.push({ start, end: performance.now() });
  // The pool calls back; the ORM and the bench's own client take a promise.
  const cb = args[args.length - 1];
  if (typeof cb === 'function') {
    args[args.length - 1] = (...r: unknown[]) => {
      done();
      return cb(...r);
    };
    return origQuery.apply(this, args);
  }
  const r = origQuery.apply(this, args);
  if (r && typeof r.then === 'function') r.then(done, () => {});
  return r;
};
/** Milliseconds of `spans` inside [a, b]. */
function within(spans: Span[], a: number, b: number): number {
  let ms = 0;
  for (const x of spans) if (x.end > a && x.start < b) ms += Math.min(b, x.end) - Math.max(a, x.start);
  return ms;
}
type Sample = Span & { ms: number };
type Io = { read: number; hit: number; checkpoints: number };
/** A store's blocks read (not in shared buffers) and hit so far, and the cluster's checkpoints. */
async function io(s: Store): Promise<Io> {
  await s.client.query('select pg_stat_force_next_flush()');
  const { rows } = await s.client.query(
    `select blks_read::float8 as read, blks_hit::float8 as hit,
            (select checkpoints_timed + checkpoints_req from pg_stat_bgwriter)::float8 as checkpoints
       from pg_stat_database where datname = current_database()`,
  );
  return rows[0] as Io;
}

async function timed(s: Store, url: string, expect: (body: any) => void, into?: Sample[]): Promise<number> {
  const t0 = performance.now();
  const body = await s.p.call('GET', url);
  const t1 = performance.now();
  const ms = t1 - t0;
  into?.push({ start: t0, end: t1, ms });
  expect(body);
  return ms;
}

/** The slowest 1% of `xs`: how many overlap a collection, and their median total / db / gc ms. */
function tail(xs: Sample[]): string {
  const slow = [...xs].sort((a, b) => b.ms - a.ms).slice(0, Math.max(1, Math.ceil(xs.length / 100)));
  const med = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? 0;
  const gc = slow.map((x) => within(gcs, x.start, x.end));
  const db = slow.map((x) => within(queries, x.start, x.end));
  const all = xs.map((x) => within(queries, x.start, x.end));
  const paused = xs.filter((x) => within(gcs, x.start, x.end) > 0).length;
  return (
    `${slow.length} slowest: ${med(slow.map((x) => x.ms)).toFixed(1)} ms, db ${med(db).toFixed(1)}, ` +
    `gc ${med(gc).toFixed(1)} (${gc.filter((g) => g > 0).length} in a gc); all: db p50 ${med(all).toFixed(2)} p99 ${pct(all, 99).toFixed(1)}, ` +
    `${paused} of ${xs.length} in a gc`
  );
}

type Path = { label: string; url(store: 'empty' | 'seeded', i: number): string; expect(body: any): void };

const nonEmpty = (key: string) => (b: any) => {
  if (!Array.isArray(b[key]) || b[key].length === 0) throw new Error(`no ${key} in ${JSON.stringify(b)}`);
};

/** A pipeline whose source divides by zero on the rows `tick` wrote: it fails when run, not when validated. */
async function deployBroken(s: Store) {
  await deployPipeline(s.p, 'broken', {
    steps: [
      {
        slug: 'one',
        kind: 'source',
        data_source_ref: 'target-db',
        operation: { operation_type: 'sql', sql: 'SELECT n FROM ticks WHERE 1 / (n - n) = 1' },
      },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'target-db',
        operation: { operation_type: 'sql', write: { table: 'ticks', mode: 'insert' } },
      },
    ],
    edges: [{ from: 'one', to: 'load' }],
  });
}

async function main() {
  console.log(
    `node ${process.version} (semi-spaces ${SEMI_SPACE_MB || 'default'} MB), ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; ` +
      `${kept ? `reusing ${kept.seeded}:` : 'seeding'} ${n(RUNS)} runs, ${n(LOG_LINES)} log lines, ${n(EVENTS)} events; ` +
      `draw ${DRAW}; load average ${load()}`,
  );
  if (!kept) {
    await createDatabase(DST);
    await sql(DST, 'create table ticks (n integer)');
  }
  const stores: Store[] = [];
  try {
    stores.push(await openStore(EMPTY));
    stores.push(await openStore(SEEDED, kept?.apiKey));
    const [empty, seeded] = stores as [Store, Store];
    if (!kept) {
      await seed(seeded);
      if (KEEP) {
        const k: Kept = {
          seeded: SEEDED,
          dst: DST,
          masterKey,
          apiKey: seeded.p.apiKey,
          runs: RUNS,
          logLines: LOG_LINES,
          events: EVENTS,
        };
        fs.writeFileSync(keptFile(SEEDED), JSON.stringify(k), { mode: 0o600 });
      }
    }
    for (const s of stores) console.log(`  ${s === empty ? 'empty ' : 'seeded'} store: ${await sizes(s)}`);

    // `net`: each request's time less the collections of this process that overlap it (see `tail`).
    const results: {
      label: string;
      empty: number[];
      seeded: number[];
      net?: { empty: number[]; seeded: number[] };
    }[] = [];
    // Executes first, alternating stores: they also give the empty store runs to list and tail.
    const exec = {
      label: 'execute → finished (one at a time)',
      empty: [] as number[],
      seeded: [] as number[],
    };
    // Each pair in turn starts with the other store, so neither is always the one after a pause.
    for (let i = 0; i < EXECUTES; i++) {
      for (const s of i % 2 === 0 ? [empty, seeded] : [seeded, empty])
        (s === empty ? exec.empty : exec.seeded).push(await executeOnce(s, mine('x', i)));
    }
    results.push(exec);
    // Failed runs on both stores, a page and more of them, so the `state=failed` list returns a
    // full page on the empty store too (otherwise it compares an empty page with a full one).
    for (const s of stores) {
      if (!s.reused) await deployBroken(s);
      for (let i = 0; i < 25; i++) await executeOnce(s, mine('f', i), 'broken', 'failed');
    }

    const cursorOf = async (s: Store, url: string) => (await s.p.call('GET', url)).next_cursor as string;
    const runsPage2 = {
      empty: await cursorOf(empty, `${PE}/runs?limit=2`),
      seeded: await cursorOf(seeded, `${PE}/runs?limit=2`),
    };
    const eventsPage2 = {
      empty: await cursorOf(empty, '/organizations/acme/events?limit=2'),
      seeded: await cursorOf(seeded, '/organizations/acme/events?limit=2'),
    };
    // Second pages start after the first two items (the empty store has few).
    // The empty store's events are about its executed runs; the seeded store's about `h…` runs.
    const someRun = (store: 'empty' | 'seeded', i: number) =>
      store === 'empty'
        ? mine('x', (i * 7919) % Math.max(1, EXECUTES))
        : `h${1 + (((i + DRAW) * 7_919_993) % RUNS)}`;
    // Event i is about run `h<i>` and occurred (EVENTS - i) / EVENTS of the 27 days ago: entities
    // drawn over all the events (not only the runs seeded, fewer than the events at a reduced
    // size), so about a quarter of them have their event in the last week, as at the full size.
    const someEntity = (store: 'empty' | 'seeded', i: number) =>
      store === 'empty' ? someRun(store, i) : `h${1 + (((i + DRAW) * 7_919_993) % EVENTS)}`;
    const paths: Path[] = [
      {
        label: 'events list, first page',
        url: () => '/organizations/acme/events?limit=20',
        expect: nonEmpty('events'),
      },
      {
        label: 'events list, second page',
        url: (s) => `/organizations/acme/events?limit=20&cursor=${eventsPage2[s]}`,
        expect: nonEmpty('events'),
      },
      {
        label: 'events list, entity_slug filter',
        url: (s, i) => `/organizations/acme/events?limit=20&entity_slug=${someEntity(s, i)}`,
        expect: () => {},
      },
      {
        label: 'security-audit events list',
        url: () => '/organizations/acme/security-audit-events?limit=20',
        expect: () => {},
      },
      { label: 'runs list, first page', url: () => `${PE}/runs?limit=20`, expect: nonEmpty('runs') },
      {
        label: 'runs list, second page',
        url: (s) => `${PE}/runs?limit=20&cursor=${runsPage2[s]}`,
        expect: nonEmpty('runs'),
      },
      {
        label: 'runs list, state=failed',
        url: () => `${PE}/runs?limit=20&state=failed`,
        expect: nonEmpty('runs'),
      },
      {
        label: 'runs list, pipeline_slug=tick',
        url: () => `${PE}/runs?limit=20&pipeline_slug=tick`,
        expect: nonEmpty('runs'),
      },
      {
        label: 'runs list, trigger=api',
        url: () => `${PE}/runs?limit=20&trigger=api`,
        expect: nonEmpty('runs'),
      },
      {
        // A random run of the last 180 days on the seeded store (its pages rarely in memory: the
        // store is larger than this machine's), one this invocation ran on the empty one.
        label: "a run's log tail (last 20 lines)",
        url: (s, i) => `${PE}/runs/${someRun(s, i)}/logs?limit=20`,
        expect: nonEmpty('logs'),
      },
      {
        // The same runs on both stores: the ones this invocation ran on each, as recent on both
        // (what the console's live tail reads); the seeded store has its history beside them.
        label: 'log tail, the same recent runs',
        url: (_s, i) => `${PE}/runs/${mine('x', (i * 7919) % Math.max(1, EXECUTES))}/logs?limit=20`,
        expect: nonEmpty('logs'),
      },
    ];
    for (const path of paths) {
      const r = { label: path.label, empty: [] as number[], seeded: [] as number[] };
      // A few unmeasured requests each: plans cached, pages of the indexes read once.
      for (let i = 0; i < 5; i++) {
        await timed(empty, path.url('empty', i), path.expect);
        await timed(seeded, path.url('seeded', i), path.expect);
      }
      const samples = { empty: [] as Sample[], seeded: [] as Sample[] };
      const p0 = performance.now();
      const io0 = await Promise.all(stores.map(io));
      for (let i = 0; i < REQUESTS; i++) {
        for (const k of i % 2 === 0 ? (['empty', 'seeded'] as const) : (['seeded', 'empty'] as const)) {
          r[k].push(await timed(k === 'empty' ? empty : seeded, path.url(k, i), path.expect, samples[k]));
        }
      }
      const net = (xs: Sample[]) => xs.map((x) => x.ms - within(gcs, x.start, x.end));
      results.push({ ...r, net: { empty: net(samples.empty), seeded: net(samples.seeded) } });
      const io1 = await Promise.all(stores.map(io));
      const d = (k: 0 | 1, f: keyof Io) => io1[k]![f] - io0[k]![f];
      console.log(
        `  ${path.label}\n    empty  ${tail(samples.empty)}; blocks read ${d(0, 'read')} hit ${d(0, 'hit')}` +
          `\n    seeded ${tail(samples.seeded)}; blocks read ${d(1, 'read')} hit ${d(1, 'hit')}; checkpoints ${d(1, 'checkpoints')}` +
          `\n    collections: ${gcSummary(p0, performance.now())}; heap used ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`,
      );
    }

    // Whether the events lists' statements kept one plan: a session's prepared statements and
    // how often each was planned for its parameters (custom) or ran its generic plan.
    for (const s of stores) {
      const { rows } = await s.p.rt.deps.store.executeSql(
        `select count(*)::int as n, coalesce(sum(generic_plans), 0)::int as generic, coalesce(sum(custom_plans), 0)::int as custom
           from pg_prepared_statements where name like 'sluice_events_%'`,
        [],
      );
      console.log(
        `  ${s === empty ? 'empty ' : 'seeded'} store, one API session: ${rows[0].n} events statements, ` +
          `${rows[0].generic} generic and ${rows[0].custom} custom plans`,
      );
    }
    console.log(`\n  load average ${load()}`);
    console.log(
      `  ${'path'.padEnd(36)} ${'empty p50'.padStart(10)} ${'p99'.padStart(8)}   ${'seeded p50'.padStart(10)} ${'p99'.padStart(8)}   p99 ratio (target ≤ 1.2) [90% interval]`,
    );
    const f = (ms: number) => `${ms.toFixed(1)} ms`;
    const row = (label: string, e: number[], s: number[]) => {
      const ratio = pct(s, 99) / pct(e, 99);
      const [lo, hi] = ratioInterval(e, s);
      console.log(
        `  ${label.padEnd(36)} ${f(pct(e, 50)).padStart(10)} ${f(pct(e, 99)).padStart(8)}   ` +
          `${f(pct(s, 50)).padStart(10)} ${f(pct(s, 99)).padStart(8)}   ${ratio.toFixed(2)} [${lo.toFixed(2)}–${hi.toFixed(2)}]` +
          `${ratio <= 1.2 ? '' : lo > 1.2 ? '  (above)' : '  (above; the interval reaches 1.2)'}`,
      );
    };
    for (const r of results) row(r.label, r.empty, r.seeded);
    // The same requests less the pauses of this process's garbage collector that overlap each
    // one: the pauses come from both APIs' (and the bench's) allocations together and fall on
    // whichever store's request is in flight, so the ratio above also measures where they fell.
    console.log(`\n  the lists again, each request less this process's collections overlapping it`);
    for (const r of results) if (r.net) row(r.label, r.net.empty, r.net.seeded);
  } finally {
    for (const s of stores) {
      await s.worker.stop();
      await s.client.end();
      await s.p.close();
    }
    await dropDatabase(EMPTY);
    if (!KEEP) {
      await dropDatabase(SEEDED);
      await dropDatabase(DST);
    } else console.log(`  kept ${SEEDED} (and ${DST}): BENCH_HISTORY_REUSE=${SEEDED} measures on it again`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
