// `npm run bench:shards`: per-organization sharding of the store, simulated on one host
// (docs/scaling.md, "Past one store"). Two organizations run trivial runs at BENCH_SHARD_RATE
// runs a minute between them, half each, for BENCH_SHARD_SECONDS:
//   one store:  both organizations on one PostgreSQL cluster, one API host, 2 worker processes;
//   one store, one worker: the same with one worker process running 8 at once (what the store's
//               cost per run owes to the number of worker processes on it);
//   two shards: each organization on a cluster of its own, each shard its own API host and one
//               worker process (as many processes as the first); this process routes each
//               organization's requests to its shard, as a router in front of the API hosts would.
// The clusters are the bench's own, four of them (test/peers/postgres-cluster.ts, fsync on as a
// production server's), so the shards share no WAL, no NOTIFY queue and no lock; they do share this
// machine's 2 cores, so runs a minute cannot rise here. What it shows: whether the store's CPU
// per run and its commits per run stay what one store spends, how the work divides between the
// shards, and what the NOTIFY lock and execute → finished do when each store carries half the
// runs. The phases run one store, one worker, two shards, two shards, one worker, one store (the
// load drifts), after a warm-up phase of each.
//
//   BENCH_SHARD_RATE=6000       runs a minute, both organizations together
//   BENCH_SHARD_SECONDS=30      length of each phase
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  createDatabase as createDatabaseOn,
  type PostgresCluster,
  startPostgresCluster,
} from '../test/peers/postgres-cluster';
import { pct } from './latency-runs';
import {
  asKey,
  createDatabase,
  dropDatabase,
  loadAverages,
  openPlatform,
  type Platform,
  setUpTick,
  sql,
} from './pipeline-support';
import { clusterCpuMs } from './proc-cpu';
import { startWorker, type WorkerProcess } from './worker-process';

const RATE = Number(process.env.BENCH_SHARD_RATE ?? 6000);
const SECONDS = Number(process.env.BENCH_SHARD_SECONDS ?? 30);
const IN_FLIGHT = 8;
const IDLE_SECONDS = 20;
const DST = `sluice_bench_shards_dst_${process.pid}`;
const masterKey = crypto.randomBytes(32).toString('base64');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-shards-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A store: its cluster and database, the API host on it, and its worker processes. */
type Store = { name: string; cluster: PostgresCluster; url: string; p: Platform; workers: WorkerProcess[] };
/** An organization as the bench drives it: the API host of its store, as its key. */
type Tenant = { org: string; store: Store; p: Platform };

/** A store database on `cluster`, bootstrapped for acme, with its API host and worker processes. */
async function openStore(
  cluster: PostgresCluster,
  name: string,
  workers: number,
  concurrency = 4,
): Promise<Store> {
  const url = await createDatabaseOn(cluster.url, name);
  const env = { DATABASE_URL: url, SLUICE_MASTER_KEY: masterKey, SLUICE_DATA_DIR: scratch };
  const p = await openPlatform({ ...env, SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000' });
  const started = await Promise.all(
    Array.from({ length: workers }, () => startWorker(env, [], ['--concurrency', String(concurrency)])),
  );
  return { name, cluster, url, p, workers: started };
}

/** `org` on `store`, its project and `tick` pipeline set up: acme is bootstrapped, another is created by acme's owner. */
async function addTenant(store: Store, org: string): Promise<Tenant> {
  let p = store.p;
  if (org !== 'acme') {
    const pat = store.p.personalAccessToken;
    if (!pat) throw new Error('the store was bootstrapped without a personal access token');
    const owner = asKey(store.p, pat);
    await owner.call('POST', '/organizations', { name: org, slug: org });
    const key = await owner.call('POST', `/organizations/${org}/api-keys`, {
      name: `${org} owner`,
      role: 'owner',
    });
    p = asKey(store.p, key.token);
  }
  await setUpTick(p, DST, org);
  return { org, store, p };
}

/** Runs executed at `perMinute` between the tenants, in turn; per tenant, the slugs and when each was asked. */
async function drive(tenants: Tenant[], perMinute: number, seconds: number, tag: string) {
  const sent = tenants.map(() => new Map<string, number>());
  const gap = 60_000 / perMinute;
  const total = Math.round((perMinute * seconds) / 60);
  const start = Date.now();
  const pending = new Set<Promise<unknown>>();
  for (let i = 0; i < total; i++) {
    const due = start + i * gap;
    if (due > Date.now()) await sleep(due - Date.now());
    while (pending.size >= IN_FLIGHT) await Promise.race(pending);
    const k = i % tenants.length;
    const slug = `${tag}-${i}`;
    sent[k].set(slug, Date.now());
    const t = tenants[k];
    const req = t.p
      .call('POST', `/organizations/${t.org}/projects/bench/environments/bench/pipelines/tick:execute`, {
        run_slug: slug,
      })
      .finally(() => pending.delete(req));
    pending.add(req);
  }
  await Promise.all(pending);
  return sent;
}

/** Waits for every run of `slugs` in the store at `url` to end; execute → finished of each (ms). */
async function finished(url: string, slugs: Map<string, number>): Promise<number[]> {
  const c = new pg.Client({ connectionString: url, application_name: 'sluice-bench' });
  await c.connect();
  try {
    const names = [...slugs.keys()];
    for (;;) {
      const r = await c.query(
        `select count(*) filter (where state in ('succeeded','failed','canceled'))::int as n,
                count(*) filter (where state in ('failed','canceled'))::int as bad
           from pipeline_runs where slug = any($1)`,
        [names],
      );
      if (r.rows[0].bad > 0) throw new Error(`${r.rows[0].bad} runs did not succeed`);
      if (r.rows[0].n === names.length) break;
      await sleep(100);
    }
    const rows = await c.query(
      `select slug, extract(epoch from finished_at) * 1000 as f from pipeline_runs where slug = any($1)`,
      [names],
    );
    return rows.rows.map((row) => Number(row.f) - slugs.get(row.slug)!);
  } finally {
    await c.end();
  }
}

/** Committed transactions so far in the store database at `url`. */
async function commits(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url, application_name: 'sluice-bench' });
  await c.connect();
  try {
    const r = await c.query(
      'select xact_commit::bigint as n from pg_stat_database where datname = current_database()',
    );
    return Number(r.rows[0].n);
  } finally {
    await c.end();
  }
}

/** Sessions of `url`'s database waiting on the NOTIFY lock (Lock:object), sampled every 100 ms. */
function notifyWaits(url: string) {
  const c = new pg.Client({ connectionString: url, application_name: 'sluice-bench' });
  let samples = 0;
  let waiting = 0;
  let stopped = false;
  const done = (async () => {
    await c.connect();
    while (!stopped) {
      const r = await c.query(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'object'`,
      );
      samples++;
      waiting += r.rows[0].n;
      await sleep(100);
    }
    await c.end();
  })();
  return async () => {
    stopped = true;
    await done;
    return waiting / Math.max(1, samples);
  };
}

type PhaseFigure = { label: string; runs: number; p50: number; p99: number; perStore: StoreFigure[] };
type StoreFigure = {
  name: string;
  runs: number;
  cpuMsPerRun: number;
  cpuMsPerSecond: number;
  commitsPerRun: number;
  notifyWaiting: number;
};

/** Runs that ended succeeded in every phase so far, the warm-ups' included (each wrote one sink row). */
let executed = 0;

/** One phase: the tenants' runs at RATE for SECONDS, then every run waited for. */
async function phase(label: string, tenants: Tenant[], stores: Store[], tag: string): Promise<PhaseFigure> {
  const clusters = [...new Set(stores.map((s) => s.cluster))];
  const cpu0 = clusters.map((c) => clusterCpuMs(c.dir));
  const commits0 = await Promise.all(stores.map((s) => commits(s.url)));
  const waits = stores.map((s) => notifyWaits(s.url));
  const t0 = performance.now();
  const sent = await drive(tenants, RATE, SECONDS, tag);
  const perTenant = await Promise.all(tenants.map((t, k) => finished(t.store.url, sent[k])));
  const elapsed = (performance.now() - t0) / 1000;
  const waiting = await Promise.all(waits.map((stop) => stop()));
  const commits1 = await Promise.all(stores.map((s) => commits(s.url)));
  const cpu1 = clusters.map((c) => clusterCpuMs(c.dir));
  const all = perTenant.flat();
  const perStore = stores.map((s, i) => {
    const runs = tenants.reduce((n, t, k) => n + (t.store === s ? sent[k].size : 0), 0);
    const cpuMs = cpu1[clusters.indexOf(s.cluster)] - cpu0[clusters.indexOf(s.cluster)];
    // Probes (this bench's own, ~3 statements a second a store) count, alike in every phase.
    return {
      name: s.name,
      runs,
      cpuMsPerRun: cpuMs / runs,
      cpuMsPerSecond: cpuMs / elapsed,
      commitsPerRun: (commits1[i] - commits0[i]) / runs,
      notifyWaiting: waiting[i],
    };
  });
  executed += all.length;
  return { label, runs: all.length, p50: pct(all, 50), p99: pct(all, 99), perStore };
}

function print(f: PhaseFigure) {
  console.log(
    `${f.label}: ${f.runs} runs, execute → finished p50 ${f.p50.toFixed(0)} ms, p99 ${f.p99.toFixed(0)} ms (load average ${loadAverages()})`,
  );
  for (const s of f.perStore)
    console.log(
      `  ${s.name.padEnd(10)} ${String(s.runs).padStart(5)} runs  store CPU ${s.cpuMsPerRun.toFixed(2)} ms a run, ` +
        `${s.cpuMsPerSecond.toFixed(0)} ms a second  commits ${s.commitsPerRun.toFixed(2)} a run  ` +
        `sessions waiting on the NOTIFY lock ${s.notifyWaiting.toFixed(2)}`,
    );
}

async function main() {
  const cpus = os.cpus();
  console.log(
    `node ${process.version}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}; ${RATE} runs/min between two organizations ` +
      `for ${SECONDS} s a phase; load average ${loadAverages()}`,
  );
  await createDatabase(DST);
  const clusters: PostgresCluster[] = [];
  const stores: Store[] = [];
  try {
    await sql(DST, 'create table ticks (n integer)');
    // A cluster for each arrangement's store and one for each shard: the idle processes of the
    // others (their API host's pool, their workers' polls) never count in a cluster's CPU.
    for (let i = 0; i < 4; i++) clusters.push(await startPostgresCluster({ settings: { fsync: 'on' } }));
    // One store: both organizations on one cluster, two worker processes.
    const one = await openStore(clusters[0], 'sluice_one', 2);
    stores.push(one);
    const together = [await addTenant(one, 'acme'), await addTenant(one, 'beta')];
    // The same with one worker process running twice as many at once: what a store's cost per
    // run owes to the number of worker processes on it, apart from the organizations.
    const single = await openStore(clusters[3], 'sluice_one_worker', 1, 8);
    stores.push(single);
    const alone = [await addTenant(single, 'acme'), await addTenant(single, 'beta')];
    // Two shards: one organization a cluster, a worker process each.
    const a = await openStore(clusters[1], 'sluice_shard_a', 1);
    const b = await openStore(clusters[2], 'sluice_shard_b', 1);
    stores.push(a, b);
    const apart = [await addTenant(a, 'acme'), await addTenant(b, 'beta')];
    // Unmeasured: every API host, worker and backend compiles and caches its run path first.
    await phase('warm-up', together, [one], 'warm-one');
    await phase('warm-up', alone, [single], 'warm-single');
    await phase('warm-up', apart, [a, b], 'warm-apart');
    // What a cluster spends with nothing asked of it (its own background processes, the API
    // host's and the workers' idle polls): part of every store's CPU per run above, once a store.
    const idle0 = clusters.map((c) => clusterCpuMs(c.dir));
    await sleep(IDLE_SECONDS * 1000);
    const idle = clusters.map((c, i) => (clusterCpuMs(c.dir) - idle0[i]) / IDLE_SECONDS);
    console.log(
      `idle ${IDLE_SECONDS} s, CPU a second: ${stores.map((s) => `${s.name} ${idle[clusters.indexOf(s.cluster)].toFixed(1)} ms`).join(', ')}`,
    );
    const figures: PhaseFigure[] = [];
    const arrangements = {
      one: () => phase('one store', together, [one], `one-${figures.length}`),
      single: () => phase('one store, one worker', alone, [single], `single-${figures.length}`),
      apart: () => phase('two shards', apart, [a, b], `apart-${figures.length}`),
    };
    for (const k of ['one', 'single', 'apart', 'apart', 'single', 'one'] as const) {
      const f = await arrangements[k]();
      print(f);
      figures.push(f);
    }
    const mean = (label: string, pick: (f: PhaseFigure) => number) => {
      const fs = figures.filter((f) => f.label === label);
      return fs.reduce((s, f) => s + pick(f), 0) / fs.length;
    };
    // Every store's CPU in the phase over every run of it.
    const perRun = (f: PhaseFigure) => f.perStore.reduce((t, x) => t + x.cpuMsPerRun * x.runs, 0) / f.runs;
    console.log(
      `\nmeans of the two phases each, two shards against one store:` +
        `\n  store CPU per run, all stores together: ${mean('one store', perRun).toFixed(2)} → ${mean('two shards', perRun).toFixed(2)} ms (× ${(mean('two shards', perRun) / mean('one store', perRun)).toFixed(2)}); ` +
        `one store with one worker process × 8: ${mean('one store, one worker', perRun).toFixed(2)} ms` +
        `\n  the busiest store's CPU a second: ${mean('one store', (f) => f.perStore[0].cpuMsPerSecond).toFixed(0)} → ` +
        `${mean('two shards', (f) => Math.max(...f.perStore.map((s) => s.cpuMsPerSecond))).toFixed(0)} ms` +
        `\n  sessions waiting on the NOTIFY lock, the busiest store: ${mean('one store', (f) => f.perStore[0].notifyWaiting).toFixed(2)} → ` +
        `${mean('two shards', (f) => Math.max(...f.perStore.map((s) => s.notifyWaiting))).toFixed(2)}` +
        `\n  execute → finished p99: ${mean('one store', (f) => f.p99).toFixed(0)} → ${mean('two shards', (f) => f.p99).toFixed(0)} ms, ` +
        `p50 ${mean('one store', (f) => f.p50).toFixed(0)} → ${mean('two shards', (f) => f.p50).toFixed(0)} ms`,
    );
    const rows = Number((await sql(DST, 'select count(*)::bigint as n from ticks'))[0].n);
    if (rows !== executed) throw new Error(`the sink holds ${rows} rows, expected ${executed} (one a run)`);
    console.log(
      `rows checked: the sink holds one row for each of the ${executed} runs, the warm-ups' included`,
    );
  } finally {
    for (const s of stores) {
      for (const w of s.workers) await w.stop().catch(() => {});
      await s.p.close().catch(() => {});
    }
    for (const c of clusters) await c.destroy().catch(() => {});
    await dropDatabase(DST).catch(() => {});
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
