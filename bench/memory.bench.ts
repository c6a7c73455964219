// `npm run bench:memory`: resident memory of `sluice serve` and `sluice worker` against bare
// processes started in the same run. Not a test: it prints figures; docs/benchmarks.md records
// them and the targets (worker idle < 120 MB, worker peak < 250 MB and flat from 1M to 10M rows;
// embedded serve idle < 150 MB and its first start < 3 s). Memory figures hold under load; start
// times do not (they are printed with the load average).
//
// Every process is fresh, started as a user starts it (`npx sluice …` runs the launcher
// packages/cli/bin/sluice, which execs node with its start-up options for serve and worker),
// awaited until it prints that it is running, left alone BENCH_SETTLE_SECONDS, then read from
// /proc/<pid>/status (VmRSS now, VmHWM the high-water mark since start).
//
//   BENCH_SETTLE_SECONDS=5          rest before reading an idle process
//   BENCH_USED_REST_SECONDS=20      the embedded `serve` after use is read again this long after
//                                   its last request (V8 shrinks its young generation once idle)
//   BENCH_MEMORY_IDLE=0             skip the idle processes (peaks only)
//   BENCH_MEMORY_ROWS=1000000       PostgreSQL → PostgreSQL runs whose worker peak is sampled
//                                   (e.g. 1000000,10000000 for the flatness target; 0 = none)
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compiledBuildIsFresh } from '../packages/cli/bin/fresh.mjs';
import { startParams } from '../packages/server/src/db/pglite';
import { childrenMB, settledMemory, startProcess } from './memory-support';
import {
  createDatabase,
  dbUrl,
  deployCopyPipeline,
  dropDatabase,
  fillRows,
  openPlatform,
  PE,
  type Platform,
  pgDataSource,
  ROW_COLUMNS,
  repoRoot,
  sql,
} from './pipeline-support';
import { startWorker } from './worker-process';

const IDLE = process.env.BENCH_MEMORY_IDLE !== '0';
const SETTLE_MS = Number(process.env.BENCH_SETTLE_SECONDS ?? 5) * 1000;
/** How long the embedded `serve` rests after use before its second reading (BENCH_USED_REST_SECONDS). */
const USED_REST_MS = Number(process.env.BENCH_USED_REST_SECONDS ?? 20) * 1000;
const ROWS = (process.env.BENCH_MEMORY_ROWS ?? '1000000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const TARGET = { workerIdle: 120, workerPeak: 250, serveIdle: 150, firstStartSeconds: 3 };

const id = `${process.pid}`;
const STORE = `sluice_bench_mem_store_${id}`;
const SERVE = `sluice_bench_mem_serve_${id}`;
const SRC = `sluice_bench_mem_src_${id}`;
const DST = `sluice_bench_mem_dst_${id}`;
const masterKey = crypto.randomBytes(32).toString('base64');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-memory-'));
const bin = path.join(repoRoot, 'packages/cli/bin/sluice');
/** The CLI's JavaScript entry started by plain `node`, without the launcher's options. */
const binMjs = path.join(repoRoot, 'packages/cli/bin/sluice.mjs');
const load = () => os.loadavg()[0].toFixed(1);
const mb = (n: number) => `${n.toFixed(0).padStart(4)} MB`;
/** The VmRSS of a process's children (a `serve`'s DuckDB child), as the readings print it. */
const childrenText = (pid: number) => {
  const kids = childrenMB(pid);
  return `child processes: ${kids.length === 0 ? 'none' : kids.map(mb).join(', ')}`;
};

// The smallest comparable processes: Node doing nothing, and Node with a Fastify route on a pg
// pool that has connected (what any HTTP service on PostgreSQL holds before its own code).
const BARE = ['-e', "console.log('ready'); setInterval(() => {}, 1 << 30)"];
const FASTIFY_PG = [
  '--input-type=module',
  '-e',
  `import Fastify from 'fastify'; import pg from 'pg';
   const pool = new pg.Pool({ connectionString: process.env.BENCH_DB, max: 10 });
   await pool.query('select 1');
   const app = Fastify();
   app.get('/', async () => (await pool.query('select 1 as ok')).rows);
   await app.listen({ host: '127.0.0.1', port: 0 });
   console.log('ready');`,
];

// A bare HTTP server (what any Node service holds before its own code), and bare PGlite: the
// embedded store's PostgreSQL alone, opened as `sluice serve` opens it (same WebAssembly tier,
// same settings, a copy of the same cluster), after one query.
const BARE_HTTP = [
  '-e',
  `require('node:http').createServer((q, r) => r.end('ok')).listen(0, '127.0.0.1', () => console.log('ready'))`,
];
const BARE_PGLITE = [
  '--liftoff-only',
  '--input-type=module',
  '-e',
  `import { PGlite } from '@electric-sql/pglite';
   const db = await PGlite.create(process.env.BENCH_PGDATA,
     { database: 'template1', startParams: JSON.parse(process.env.BENCH_PARAMS) });
   await db.query('select 1');
   console.log('ready');
   setInterval(() => {}, 1 << 30);`,
];

// Ten columns: ints, a bigint, numerics, text, timestamps, a boolean and a nullable text.
const COLUMNS = ROW_COLUMNS;

async function measure(label: string, args: string[], env: Record<string, string>, ready: string) {
  const p = await startProcess(args, env, ready);
  try {
    const m = { ...(await settledMemory(p, SETTLE_MS)), readyMs: p.readyMs };
    console.log(
      `  ${label.padEnd(44)} VmRSS ${mb(m.rssMB)}  VmHWM ${mb(m.hwmMB)}  (ready in ${(p.readyMs / 1000).toFixed(1)} s, load ${load()})`,
    );
    return m;
  } finally {
    await p.stop();
  }
}

async function idleFigures() {
  const pgEnv = { DATABASE_URL: dbUrl(STORE), SLUICE_MASTER_KEY: masterKey, SLUICE_DATA_DIR: tmp };
  console.log(`Idle processes, ${SETTLE_MS / 1000} s after ready (load average ${load()})`);
  const bare = await measure('node (bare, baseline)', BARE, {}, 'ready');
  const fastify = await measure(
    'node + Fastify + pg pool (baseline)',
    FASTIFY_PG,
    { BENCH_DB: dbUrl(STORE) },
    'ready',
  );
  // The worker migrates the platform database on first start; measure the second start.
  await measure(
    'sluice worker, PostgreSQL (first start, migrates)',
    [bin, 'worker'],
    pgEnv,
    'worker is running',
  );
  const worker = await measure('sluice worker, PostgreSQL', [bin, 'worker'], pgEnv, 'worker is running');
  const workerSources = await measure(
    'sluice worker, PostgreSQL, from sources (tsx)',
    [bin, 'worker'],
    { ...pgEnv, SLUICE_RUN_SOURCES: '1' },
    'worker is running',
  );
  const addrs = ['--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'];
  const servePg = await measure(
    'sluice serve, PostgreSQL',
    [bin, 'serve', ...addrs],
    { DATABASE_URL: dbUrl(SERVE), SLUICE_MASTER_KEY: masterKey, SLUICE_DATA_DIR: tmp },
    'Sluice is running',
  );
  const httpBare = await measure('node + http server (baseline)', BARE_HTTP, {}, 'ready');
  const dataDir = path.join(tmp, 'embedded');
  const embedded = { SLUICE_DATA_DIR: dataDir };
  // First start of a new data directory: the cluster is copied from the template `npm install`
  // prepared (initdb when there is none), then migrated.
  const first = await measure(
    'sluice serve, embedded (first start, new data dir)',
    [bin, 'serve', ...addrs],
    embedded,
    'Sluice is running',
  );
  const pgliteDir = path.join(tmp, 'bare-pglite');
  fs.cpSync(path.join(dataDir, 'pgdata'), pgliteDir, { recursive: true });
  const pglite = await measure(
    'bare PGlite, one query (baseline)',
    BARE_PGLITE,
    { BENCH_PGDATA: pgliteDir, BENCH_PARAMS: JSON.stringify(await startParams()) },
    'ready',
  );
  const serve = await measure(
    'sluice serve, embedded (second start)',
    [bin, 'serve', ...addrs],
    embedded,
    'Sluice is running',
  );
  // Without the launcher's start-up options (--v8-pool-size=1, MALLOC_ARENA_MAX=2): plain
  // `node packages/cli/bin/sluice.mjs serve`.
  const plain = await measure(
    'sluice serve, embedded, node sluice.mjs',
    [binMjs, 'serve', ...addrs],
    embedded,
    'Sluice is running',
  );
  const used = await usedServe(dataDir, addrs);

  console.log('\n  ratios (VmRSS):');
  console.log(`    worker / bare node            ${(worker.rssMB / bare.rssMB).toFixed(2)}`);
  console.log(`    worker / Fastify + pg         ${(worker.rssMB / fastify.rssMB).toFixed(2)}`);
  console.log(`    worker from sources / worker  ${(workerSources.rssMB / worker.rssMB).toFixed(2)}`);
  console.log(`    serve on PostgreSQL / Fastify + pg ${(servePg.rssMB / fastify.rssMB).toFixed(2)}`);
  console.log(`    embedded serve / bare PGlite  ${(serve.rssMB / pglite.rssMB).toFixed(2)}`);
  console.log(`    embedded serve / http server  ${(serve.rssMB / httpBare.rssMB).toFixed(2)}`);
  console.log(
    `    embedded serve, node sluice.mjs / embedded serve ${(plain.rssMB / serve.rssMB).toFixed(2)}`,
  );
  console.log(
    `    embedded serve − bare PGlite − (serve on PostgreSQL − Fastify + pg) ${mb(serve.rssMB - pglite.rssMB - (servePg.rssMB - fastify.rssMB))}`,
  );
  console.log('  targets:');
  console.log(
    `    worker idle ${mb(worker.rssMB)} < ${TARGET.workerIdle} MB: ${worker.rssMB < TARGET.workerIdle ? 'met' : 'MISSED'}`,
  );
  for (const [label, m] of [
    ['after start', serve],
    ['after requests and runs', used.soon],
    [`after requests and runs, ${USED_REST_MS / 1000} s later`, used.rested],
  ] as const) {
    console.log(
      `    embedded serve idle ${label} ${mb(m.rssMB)} < ${TARGET.serveIdle} MB: ${m.rssMB < TARGET.serveIdle ? 'met' : 'MISSED'}`,
    );
  }
  const firstS = first.readyMs / 1000;
  console.log(
    `    embedded first start ${firstS.toFixed(1)} s < ${TARGET.firstStartSeconds} s: ${firstS < TARGET.firstStartSeconds ? 'met' : 'MISSED'} ` +
      `(second start ${(serve.readyMs / 1000).toFixed(1)} s, bare PGlite ${(pglite.readyMs / 1000).toFixed(1)} s; times vary with load, ${load()} now)`,
  );
}

/**
 * The embedded `serve` after use, as a newcomer uses it: `sluice setup`, `sluice apply` of
 * examples/first-pipeline, three runs of its pipeline (`pipelines execute --wait`) and some list
 * requests, each CLI command a process of its own; then rest and read the serve process.
 */
async function usedServe(dataDir: string, addrs: string[]) {
  const p = await startProcess([bin, 'serve', ...addrs], { SLUICE_DATA_DIR: dataDir }, 'Sluice is running');
  try {
    const home = fs.mkdtempSync(path.join(tmp, 'home-'));
    const api = /API host: (\S+)/.exec(p.output())?.[1];
    if (!api) throw new Error(`no API address in:\n${p.output()}`);
    const cli = async (args: string[], env: Record<string, string> = {}) => {
      const c = await startProcess([bin, ...args], { HOME: home, SLUICE_BASE_URL: api, ...env }, '');
      const code = await c.exited;
      if (code !== 0) throw new Error(`sluice ${args.join(' ')} exited ${code}:\n${c.output()}`);
      return c.output();
    };
    const setup = JSON.parse(
      await cli(['setup', '--org', 'acme', '--email', 'bench@example.com', '--no-save', '--json'], {
        SLUICE_DATA_DIR: dataDir,
      }),
    );
    const auth = { SLUICE_TOKEN: setup.api_key, SLUICE_ORG: 'acme' };
    await cli(['apply', '-f', path.join(repoRoot, 'examples/first-pipeline')], auth);
    // The apply checked the transform's SQL: in the server's DuckDB child (docs/operations.md),
    // which stops once idle, so its memory is printed beside the process's, not in it.
    const applied = await settledMemory(p, SETTLE_MS);
    console.log(
      `  ${'sluice serve, embedded, after setup + apply'.padEnd(44)} VmRSS ${mb(applied.rssMB)}  VmHWM ${mb(applied.hwmMB)}  ` +
        `(${childrenText(p.pid)}; load ${load()})`,
    );
    const execute = 'pipelines execute --project first --env dev --pipeline org-activity --wait';
    for (let i = 0; i < 3; i++) await cli(execute.split(' '), auth);
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${api}/organizations/acme/events?limit=50`, {
        headers: { authorization: `Bearer ${setup.api_key}` },
      });
      if (!res.ok) throw new Error(`GET /events: ${res.status}`);
      await res.arrayBuffer();
    }
    const m = await settledMemory(p, SETTLE_MS);
    console.log(
      `  ${'sluice serve, embedded, after 3 runs + 50 requests'.padEnd(44)} VmRSS ${mb(m.rssMB)}  VmHWM ${mb(m.hwmMB)}  (load ${load()})`,
    );
    // V8 shrinks its young generation (grown to 16 MB by the runs) only once the process has
    // allocated little for ~8 s (its memory reducer): what an idle `serve` keeps after use.
    const rested = await settledMemory(p, Math.max(0, USED_REST_MS - SETTLE_MS));
    console.log(
      `  ${`  the same, ${USED_REST_MS / 1000} s after its last request`.padEnd(44)} VmRSS ${mb(rested.rssMB)}  ` +
        `(${childrenText(p.pid)})`,
    );
    return { soon: m, rested };
  } finally {
    await p.stop();
  }
}

const fillSource = (n: number) => fillRows(SRC, 'src', n);

/** PostgreSQL → PostgreSQL (10 columns) in a fresh worker: idle, sampled peak and VmHWM. */
async function peakFigures(p: Platform) {
  await p.call('POST', '/organizations/acme/projects', { name: 'Bench', slug: 'bench' });
  await p.call('POST', '/organizations/acme/environments', { name: 'Bench', slug: 'bench' });
  await p.call('PUT', '/organizations/acme/projects/bench/environments/bench');
  await p.call('POST', '/organizations/acme/data-sources', pgDataSource('source-db', SRC, true));
  await p.call('POST', '/organizations/acme/data-sources', pgDataSource('target-db', DST));
  await deployCopyPipeline(
    p,
    'pg-to-pg',
    { ref: 'source-db', table: 'src' },
    { ref: 'target-db', table: 'dst' },
  );
  const peaks: { n: number; peak: number; idle: number }[] = [];
  for (const n of ROWS) {
    console.log(
      `\nWorker peak, PostgreSQL → PostgreSQL, ${n.toLocaleString('en')} rows (load average ${load()})`,
    );
    await fillSource(n);
    await sql(DST, 'drop table if exists dst');
    await sql(DST, `create table dst (${COLUMNS})`);
    const worker = await startWorker({
      DATABASE_URL: dbUrl(STORE),
      SLUICE_MASTER_KEY: masterKey,
      SLUICE_DATA_DIR: tmp,
      SLUICE_QUEUE_POLL_SECONDS: '0.5',
    });
    try {
      worker.sample();
      const started = performance.now();
      const queued = await p.call('POST', `${PE}/pipelines/pg-to-pg:execute`, {});
      let run: any;
      for (;;) {
        await new Promise((r) => setTimeout(r, 250));
        run = await p.call('GET', `${PE}/runs/${queued.slug}`);
        if (['succeeded', 'failed', 'canceled'].includes(run.state)) break;
      }
      const pk = worker.peaks();
      if (run.state !== 'succeeded') throw new Error(`run ${run.state}: ${JSON.stringify(run.error)}`);
      const loaded = Number((await sql(DST, 'select count(*)::bigint as n from dst'))[0].n);
      if (loaded !== n) throw new Error(`the run loaded ${loaded} rows, expected ${n}`);
      const peak = Math.max(pk.sampledMB, pk.hwmMB);
      peaks.push({ n, peak, idle: pk.idleMB });
      console.log(
        `  ${n.toLocaleString('en')} rows checked in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
          `worker idle ${mb(pk.idleMB)}, peak sampled ${mb(pk.sampledMB)}, VmHWM ${mb(pk.hwmMB)} ` +
          `(peak / idle ${(peak / pk.idleMB).toFixed(2)}); target < ${TARGET.workerPeak} MB: ${peak < TARGET.workerPeak ? 'met' : 'MISSED'}`,
      );
    } finally {
      await worker.stop();
    }
  }
  if (peaks.length > 1) {
    const first = peaks[0];
    const last = peaks[peaks.length - 1];
    console.log(
      `\n  flatness: peak at ${last.n.toLocaleString('en')} rows / peak at ${first.n.toLocaleString('en')} rows = ${(last.peak / first.peak).toFixed(2)}`,
    );
  }
}

async function main() {
  // A stale build makes `sluice` run its sources through tsx (~100 MB more in every process):
  // the figures would measure the TypeScript loader, not Sluice.
  if (!compiledBuildIsFresh(new URL('../packages/cli/', import.meta.url))) {
    throw new Error(
      'packages/cli/dist is not built from the sources as they are: run `npm run build -w @sluice/cli` first',
    );
  }
  console.log(
    `Node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  for (const db of [STORE, SERVE, SRC, DST]) await createDatabase(db);
  let p: Platform | null = null;
  try {
    if (IDLE) await idleFigures();
    if (ROWS.length > 0) {
      p = await openPlatform({
        DATABASE_URL: dbUrl(STORE),
        SLUICE_MASTER_KEY: masterKey,
        SLUICE_DATA_DIR: tmp,
      });
      await peakFigures(p);
    }
  } finally {
    await p?.close();
    for (const db of [STORE, SERVE, SRC, DST]) await dropDatabase(db).catch(() => {});
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
