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
// alternate between the two stores, so the load other processes put on the machine falls on both.
//
//   BENCH_HISTORY_RUNS=10000000        seeded runs
//   BENCH_HISTORY_LOG_LINES=100000000  seeded run log lines (spread evenly over the runs)
//   BENCH_HISTORY_EVENTS=10000000      seeded events
//   BENCH_HISTORY_REQUESTS=1000        requests per list path and store
//   BENCH_HISTORY_EXECUTES=300         runs executed one at a time per store
//   BENCH_HISTORY_SEED_CONNECTIONS=2   sessions the seeding chunks and index builds are spread over
//   BENCH_HISTORY_KEEP=1               keep the seeded database (its name is printed)
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
  dropDatabase,
  openPlatform,
  PE,
  type Platform,
  setUpTick,
  sql,
  startWorker,
  type WorkerProcess,
} from './pipeline-support';

const RUNS = Number(process.env.BENCH_HISTORY_RUNS ?? 10_000_000);
const LOG_LINES = Number(process.env.BENCH_HISTORY_LOG_LINES ?? 100_000_000);
const EVENTS = Number(process.env.BENCH_HISTORY_EVENTS ?? 10_000_000);
const REQUESTS = Number(process.env.BENCH_HISTORY_REQUESTS ?? 1000);
const EXECUTES = Number(process.env.BENCH_HISTORY_EXECUTES ?? 300);
const PIPELINES = 10;
const RUN_DAYS = 180;
const EVENT_DAYS = 27;
const CHUNK = 500_000;
const SEED_CONNECTIONS = Number(process.env.BENCH_HISTORY_SEED_CONNECTIONS ?? 2);

const id = `${process.pid}`;
const EMPTY = `sluice_bench_hist_empty_${id}`;
const SEEDED = `sluice_bench_hist_seeded_${id}`;
const DST = `sluice_bench_hist_dst_${id}`;
const masterKey = crypto.randomBytes(32).toString('base64');
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

type Store = { name: string; p: Platform; worker: WorkerProcess; client: pg.Client };

async function openStore(name: string): Promise<Store> {
  await createDatabase(name);
  const p = await openPlatform({
    DATABASE_URL: dbUrl(name),
    SLUICE_MASTER_KEY: masterKey,
    SLUICE_DATA_DIR: dataDir,
    SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
  });
  await setUpTick(p, DST);
  for (let i = 1; i < PIPELINES; i++) {
    await p.call('POST', '/organizations/acme/projects/bench/pipelines', { name: `p${i}`, slug: `p${i}` });
  }
  const worker = await startWorker({
    DATABASE_URL: dbUrl(name),
    SLUICE_MASTER_KEY: masterKey,
    SLUICE_DATA_DIR: dataDir,
  });
  const client = new pg.Client({ connectionString: dbUrl(name), application_name: 'sluice-bench' });
  await client.connect();
  return { name, p, worker, client };
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
async function executeOnce(s: Store, slug: string): Promise<number> {
  const t0 = Date.now();
  await s.p.call('POST', `${PE}/pipelines/tick:execute`, { run_slug: slug });
  for (;;) {
    const { rows } = await s.client.query(
      // By (organization, slug), the unique index: a slug alone would scan every run.
      `select state, extract(epoch from finished_at) * 1000 as f from pipeline_runs
        where organization_id = (select id from organizations where slug = 'acme') and slug = $1`,
      [slug],
    );
    if (rows[0]?.f) {
      if (rows[0].state !== 'succeeded') throw new Error(`${s.name} ${slug}: ${rows[0].state}`);
      return Number(rows[0].f) - t0;
    }
    await sleep(5);
  }
}

async function timed(s: Store, url: string, expect: (body: any) => void): Promise<number> {
  const t0 = performance.now();
  const body = await s.p.call('GET', url);
  const ms = performance.now() - t0;
  expect(body);
  return ms;
}

type Path = { label: string; url(store: 'empty' | 'seeded', i: number): string; expect(body: any): void };

const nonEmpty = (key: string) => (b: any) => {
  if (!Array.isArray(b[key]) || b[key].length === 0) throw new Error(`no ${key} in ${JSON.stringify(b)}`);
};

async function main() {
  console.log(
    `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; seeding ${n(RUNS)} runs, ` +
      `${n(LOG_LINES)} log lines, ${n(EVENTS)} events; load average ${load()}`,
  );
  await createDatabase(DST);
  await sql(DST, 'create table ticks (n integer)');
  const stores: Store[] = [];
  try {
    stores.push(await openStore(EMPTY));
    stores.push(await openStore(SEEDED));
    const [empty, seeded] = stores as [Store, Store];
    await seed(seeded);
    for (const s of stores) console.log(`  ${s === empty ? 'empty ' : 'seeded'} store: ${await sizes(s)}`);

    const results: { label: string; empty: number[]; seeded: number[] }[] = [];
    // Executes first, alternating stores: they also give the empty store runs to list and tail.
    const exec = {
      label: 'execute → finished (one at a time)',
      empty: [] as number[],
      seeded: [] as number[],
    };
    for (let i = 0; i < EXECUTES; i++) {
      exec.empty.push(await executeOnce(empty, `x${i}`));
      exec.seeded.push(await executeOnce(seeded, `x${i}`));
    }
    results.push(exec);

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
      store === 'empty' ? `x${(i * 7919) % Math.max(1, EXECUTES)}` : `h${1 + ((i * 7_919_993) % RUNS)}`;
    // Event i is about run `h<i>` and occurred (EVENTS - i) / EVENTS of the 27 days ago: entities
    // drawn over all the events (not only the runs seeded, fewer than the events at a reduced
    // size), so about a quarter of them have their event in the last week, as at the full size.
    const someEntity = (store: 'empty' | 'seeded', i: number) =>
      store === 'empty' ? someRun(store, i) : `h${1 + ((i * 7_919_993) % EVENTS)}`;
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
      { label: 'runs list, state=failed', url: () => `${PE}/runs?limit=20&state=failed`, expect: () => {} },
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
        label: "a run's log tail (last 20 lines)",
        url: (s, i) => `${PE}/runs/${someRun(s, i)}/logs?limit=20`,
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
      for (let i = 0; i < REQUESTS; i++) {
        r.empty.push(await timed(empty, path.url('empty', i), path.expect));
        r.seeded.push(await timed(seeded, path.url('seeded', i), path.expect));
      }
      results.push(r);
    }

    console.log(`\n  load average ${load()}`);
    console.log(
      `  ${'path'.padEnd(36)} ${'empty p50'.padStart(10)} ${'p99'.padStart(8)}   ${'seeded p50'.padStart(10)} ${'p99'.padStart(8)}   p99 ratio (target ≤ 1.2)`,
    );
    const f = (ms: number) => `${ms.toFixed(1)} ms`;
    for (const r of results) {
      const ratio = pct(r.seeded, 99) / pct(r.empty, 99);
      console.log(
        `  ${r.label.padEnd(36)} ${f(pct(r.empty, 50)).padStart(10)} ${f(pct(r.empty, 99)).padStart(8)}   ` +
          `${f(pct(r.seeded, 50)).padStart(10)} ${f(pct(r.seeded, 99)).padStart(8)}   ${ratio.toFixed(2)}${ratio <= 1.2 ? '' : '  (above)'}`,
      );
    }
  } finally {
    for (const s of stores) {
      await s.worker.stop();
      await s.client.end();
      await s.p.close();
    }
    await dropDatabase(EMPTY);
    if (!process.env.BENCH_HISTORY_KEEP) await dropDatabase(SEEDED);
    else console.log(`  kept ${SEEDED}`);
    await dropDatabase(DST);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
