// `npm run bench:api-list`: what one authenticated list request costs the API host, measured on
// `sluice serve --no-worker` processes exactly as a user starts them (compiled CLI builds), the
// load from autocannon in another process, A/B between two builds in alternating order. The
// list is bench:latency's API phase (BENCH_API_LIST, default the environment's runs, 20 a page
// with their steps) on a store of BENCH_API_RUNS finished runs. Not a test: it prints figures.
//
// Per build and round: requests a second reached over BENCH_API_CONNECTIONS connections with no
// rate cap (saturation: what the host serves when it has a core), its p99, the serve process's
// CPU per request (/proc: user + system, every thread) and the store backends' CPU per request;
// then the same at a fixed BENCH_API_RATE (what 500 a second cost beside the runs).
//
//   BENCH_BASELINE=packages/cli/.dist-main   the A build (a copy of packages/cli/dist built from main)
//   BENCH_CANDIDATE=packages/cli/dist        the B build (`sources`: this checkout's TypeScript
//                                            through tsx, names intact for a CPU profile)
//   BENCH_AB_ROUNDS=3             rounds; each starts a fresh server of each build, order alternating
//   BENCH_API_SECONDS=8           length of each measurement (after a 3 s warm-up)
//   BENCH_API_RATE=500            the fixed rate measured after the saturated one (0 skips it)
//   BENCH_API_CONNECTIONS=16      as bench:latency's API load
//   BENCH_API_LIST=runs|events    which list
//   BENCH_API_RUNS=300            finished runs in the store
//   BENCH_API_LOG_LEVEL=warn      the servers' SLUICE_LOG_LEVEL (bench:latency's API logs at warn;
//                                 `info`, the shipped default, logs every request)
//   BENCH_CPU_PROF=dir            V8 CPU profiles of the servers into dir
//   BENCH_PERF=dir                `perf record` of each server's saturated measurement into dir
//                                 (the servers run with --perf-basic-prof for JavaScript names)
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApiLoad } from './latency-probes';
import {
  createDatabase,
  dbUrl,
  dropDatabase,
  loadAverages,
  openPlatform,
  PE,
  setUpTick,
  sql,
} from './pipeline-support';
import { cpuSeconds } from './proc-cpu';
import { startSluice, startWorker } from './worker-process';

const BASELINE = process.env.BENCH_BASELINE ?? 'packages/cli/.dist-main';
const CANDIDATE = process.env.BENCH_CANDIDATE ?? 'packages/cli/dist';
const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 8);
const RATE = Number(process.env.BENCH_API_RATE ?? 500);
const CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 16);
const LIST = process.env.BENCH_API_LIST ?? 'runs';
const RUNS = Number(process.env.BENCH_API_RUNS ?? 300);
const LOG_LEVEL = process.env.BENCH_API_LOG_LEVEL ?? 'warn';
const PERF = process.env.BENCH_PERF ?? '';
const PROF = [
  ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
  ...(PERF ? ['--perf-basic-prof'] : []),
];
const LIST_PATH = LIST === 'runs' ? `${PE}/runs?limit=20` : '/organizations/acme/events?limit=20';

const STORE = `sluice_bench_apiab_store_${process.pid}`;
const DST = `sluice_bench_apiab_dst_${process.pid}`;
const masterKey = crypto.randomBytes(32).toString('base64');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-apiab-'));
const load = loadAverages;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const storeEnv = () => ({
  DATABASE_URL: dbUrl(STORE),
  SLUICE_MASTER_KEY: masterKey,
  SLUICE_DATA_DIR: dataDir,
  SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
});

/** autocannon against url with the bench key for `seconds`, at `rate` a second (0: no cap). */
const cannon = (url: string, key: string, seconds: number, rate: number) =>
  startApiLoad(url, key, rate, seconds, CONNECTIONS).done;

/** CPU seconds of the store's client backends, summed over every backend seen (pid → last read). */
function storeCpu() {
  const seen = new Map<number, number>();
  return async () => {
    const rows = await sql<{ pid: number }>(
      'postgres',
      "select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'",
      [STORE],
    );
    for (const { pid } of rows) {
      try {
        seen.set(pid, cpuSeconds(pid));
      } catch {} // ended meanwhile
    }
    let total = 0;
    for (const v of seen.values()) total += v;
    return total;
  };
}

async function startServe(dist: string, port: number): Promise<{ pid: number; stop(): Promise<void> }> {
  const sources = dist === 'sources';
  const p = await startSluice({
    command: [
      'serve',
      '--no-worker',
      '--api-addr',
      `127.0.0.1:${port}`,
      '--app-addr',
      `127.0.0.1:${port + 1}`,
    ],
    env: { ...storeEnv(), SLUICE_LOG_LEVEL: LOG_LEVEL, ...(sources ? { SLUICE_RUN_SOURCES: '1' } : {}) },
    ready: 'Sluice is running',
    nodeArgs: PROF,
    dist: sources ? undefined : dist,
  });
  return { pid: p.pid, stop: p.stop };
}

type Figures = {
  rps: number;
  p99: number;
  cpuUs: number;
  /** Of the API's CPU, the kernel's share (system time: sockets). */
  systemShare: number;
  storeUs: number;
  rateCpuUs: number;
  rateP99: number;
};

/** User and system CPU ticks of a process so far. */
function userSystem(pid: number): [number, number] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(f[11]), Number(f[12])];
}

async function measure(dist: string, key: string, port: number): Promise<Figures> {
  const serve = await startServe(dist, port);
  try {
    const url = `http://127.0.0.1:${port}${LIST_PATH}`;
    await cannon(url, key, 3, 0); // warm-up: JIT, pool, plans
    const store = storeCpu();
    const perf = PERF
      ? spawn(
          'perf',
          [
            'record',
            '-F',
            '999',
            '-g',
            '-p',
            String(serve.pid),
            '-o',
            path.join(PERF, `perf-${serve.pid}.data`),
          ],
          { stdio: 'ignore' },
        )
      : null;
    const cpu0 = cpuSeconds(serve.pid);
    const [u0, k0] = userSystem(serve.pid);
    const s0 = await store();
    const sat = await cannon(url, key, SECONDS, 0);
    const cpu1 = cpuSeconds(serve.pid);
    const [u1, k1] = userSystem(serve.pid);
    const s1 = await store();
    if (perf) {
      perf.kill('SIGINT');
      await new Promise((r) => perf.on('close', r));
    }
    if (sat.non2xx || sat.errors) throw new Error(`${dist}: ${sat.non2xx} non-2xx, ${sat.errors} errors`);
    let rateCpuUs = Number.NaN;
    let rateP99 = Number.NaN;
    if (RATE > 0) {
      const fixed = await cannon(url, key, SECONDS, RATE);
      if (fixed.non2xx || fixed.errors) throw new Error(`${dist}: failed requests at ${RATE}/s`);
      rateCpuUs = ((cpuSeconds(serve.pid) - cpu1) * 1e6) / fixed.total;
      rateP99 = fixed.p99;
    }
    return {
      rps: sat.rps,
      p99: sat.p99,
      cpuUs: ((cpu1 - cpu0) * 1e6) / sat.total,
      systemShare: (k1 - k0) / (u1 - u0 + k1 - k0),
      storeUs: ((s1 - s0) * 1e6) / sat.total,
      rateCpuUs,
      rateP99,
    };
  } finally {
    await serve.stop();
  }
}

async function main() {
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs; ${LIST} list, ${RUNS} runs, ${CONNECTIONS} connections, ` +
      `${SECONDS} s each, log level ${LOG_LEVEL}; A ${BASELINE}, B ${CANDIDATE}; load average ${load()}`,
  );
  for (const db of [STORE, DST]) await createDatabase(db);
  try {
    await sql(DST, 'create table ticks (n integer)');
    const p = await openPlatform(storeEnv());
    let key: string;
    try {
      key = p.apiKey;
      await setUpTick(p, DST);
      for (let i = 0; i < RUNS; i++)
        await p.call('POST', `${PE}/pipelines/tick:execute`, { run_slug: `r${i}` });
    } finally {
      await p.close();
    }
    const worker = await startWorker(storeEnv(), [], ['--concurrency', '4']);
    try {
      for (;;) {
        const [{ n }] = await sql(
          STORE,
          "select count(*)::int as n from pipeline_runs where state = 'succeeded'",
        );
        if (n >= RUNS) break;
        await sleep(250);
      }
    } finally {
      await worker.stop();
    }
    await sql(STORE, 'vacuum (analyze)');
    const figures = new Map<string, Figures[]>([
      ['A', []],
      ['B', []],
    ]);
    let port = 18_000 + (process.pid % 1000) * 4;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
      for (const build of order) {
        const f = await measure(build === 'A' ? BASELINE : CANDIDATE, key, port);
        port += 2;
        figures.get(build)!.push(f);
        console.log(
          `round ${round + 1} ${build}: ${f.rps.toFixed(0)} req/s p99 ${f.p99} ms, API CPU ${f.cpuUs.toFixed(0)} µs/req ` +
            `(${(f.systemShare * 100).toFixed(0)} % system), ` +
            `store backends ${f.storeUs.toFixed(0)} µs/req` +
            (RATE > 0
              ? `; at ${RATE}/s: API CPU ${f.rateCpuUs.toFixed(0)} µs/req, p99 ${f.rateP99} ms`
              : '') +
            `   (load ${load()})`,
        );
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    for (const [build, fs_] of figures) {
      console.log(
        `${build} mean: ${mean(fs_.map((f) => f.rps)).toFixed(0)} req/s, API CPU ${mean(fs_.map((f) => f.cpuUs)).toFixed(0)} µs/req ` +
          (RATE > 0 ? `(at ${RATE}/s ${mean(fs_.map((f) => f.rateCpuUs)).toFixed(0)})` : '') +
          `, store ${mean(fs_.map((f) => f.storeUs)).toFixed(0)} µs/req`,
      );
    }
    const [{ n }] = await sql(STORE, 'select count(*)::int as n from pipeline_runs');
    if (n !== RUNS) throw new Error(`the store holds ${n} runs, expected ${RUNS}`);
  } finally {
    for (const db of [STORE, DST]) await dropDatabase(db).catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
