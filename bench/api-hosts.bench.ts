// `npm run bench:api-hosts`: several API hosts on one store (docs/scaling.md, "Past one store",
// more API hosts). For each count of hosts (BENCH_HOSTS), that many `sluice serve --no-worker`
// processes, started as a user starts them, each with its own pool, on one PostgreSQL store;
// autocannon in another process spreads its connections over them (connection i asks host
// i mod n, as a round-robin balancer would). Two phases per count: BENCH_API_RATE authenticated
// list requests a second, then as many as the connections get answered (before them, 10 s idle:
// what the hosts and the store spend with no request). Printed per count: the
// rate reached, p50 / p99, the store's CPU per request (every backend of the store's database),
// the hosts' CPU per request, and the most store sessions they held; the ratio to one host beside.
// Simulated on one host: every process shares the same 2 cores, so requests a second cannot rise
// here; what it shows is whether the store's cost per request and its sessions stay flat as hosts
// are added.
//
//   BENCH_HOSTS=1,2,4            host counts, measured in this order and then in reverse
//   BENCH_API_RATE=500           requests a second of the fixed-rate phase
//   BENCH_API_CONNECTIONS=16     autocannon's connections (spread over the hosts)
//   BENCH_API_SECONDS=20         length of each phase
//   BENCH_API_LIST=runs          `runs` (the environment's runs, 20 with their steps) or `events`
//   BENCH_REQUEST_RUNS=300       runs in the store (run by a worker before the hosts start)
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectionPeaks, startApiLoad } from './latency-probes';
import { endWatch, sluiceRuns, watchStore } from './latency-runs';
import type { Started } from './memory-support';
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
import { backendsOf, cpuSeconds, sampleCpu } from './proc-cpu';
import { startSluice, startWorker } from './worker-process';

const HOSTS = (process.env.BENCH_HOSTS ?? '1,2,4').split(',').filter(Boolean).map(Number);
const RATE = Number(process.env.BENCH_API_RATE ?? 500);
const CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 16);
const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 20);
const LIST = process.env.BENCH_API_LIST ?? 'runs';
if (!['runs', 'events'].includes(LIST)) throw new Error('BENCH_API_LIST is runs or events');
const LIST_PATH = LIST === 'runs' ? `${PE}/runs?limit=20` : '/organizations/acme/events?limit=20';
const RUNS = Number(process.env.BENCH_REQUEST_RUNS ?? 300);
const IDLE_SECONDS = 10;

const STORE = `sluice_bench_hosts_store_${process.pid}`;
const DST = `sluice_bench_hosts_dst_${process.pid}`;
const masterKey = crypto.randomBytes(32).toString('base64');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-hosts-'));
watchStore(STORE);

type Figure = { rps: number; p50: number; p99: number; storeMs: number; hostsMs: number; sessions: number };
type Host = { proc: Started; url: string };

/** `n` API hosts on the store, each with a data dir of its own; resolves once all are ready. */
async function startHosts(n: number): Promise<Host[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const dir = path.join(scratch, `host-${n}-${i}`);
      fs.mkdirSync(dir, { recursive: true });
      const proc = await startSluice({
        command: ['serve', '--no-worker', '--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'],
        env: {
          DATABASE_URL: dbUrl(STORE),
          SLUICE_MASTER_KEY: masterKey,
          SLUICE_DATA_DIR: dir,
          SLUICE_LOG_LEVEL: 'warn',
          // Every request is the one bench key's: the per-token limit would measure 429s.
          SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
        },
        ready: 'Sluice is running',
      });
      const api = /API host: (\S+)/.exec(proc.output())?.[1];
      if (!api) throw new Error(`serve printed no API host: ${proc.output()}`);
      return { proc, url: `${api}${LIST_PATH}` };
    }),
  );
}

/** One phase on `hosts`: `rate` requests a second (0: as many as answered) for SECONDS. */
async function phase(hosts: Host[], apiKey: string, rate: number): Promise<Figure> {
  const cpu = sampleCpu({ store: backendsOf(STORE) }, {}, 200);
  const hostCpu0 = hosts.map((h) => cpuSeconds(h.proc.pid));
  const sessions = await connectionPeaks([STORE]);
  const load = await startApiLoad(
    hosts.map((h) => h.url),
    apiKey,
    rate,
    SECONDS,
    CONNECTIONS,
  ).done;
  const peaks = await sessions.stop();
  const { totals } = cpu.stop();
  const hostsS = hosts.reduce((s, h, i) => s + cpuSeconds(h.proc.pid) - hostCpu0[i], 0);
  if (load.non2xx > 0 || load.errors > 0)
    throw new Error(`${hosts.length} host(s): ${load.non2xx} answers not 2xx, ${load.errors} errors`);
  return {
    rps: load.rps,
    p50: load.p50,
    p99: load.p99,
    storeMs: (totals.store * 1000) / load.total,
    hostsMs: (hostsS * 1000) / load.total,
    sessions: peaks.get(STORE) ?? 0,
  };
}

const line = (label: string, f: Figure, one?: Figure) =>
  `  ${label.padEnd(22)}${f.rps.toFixed(0).padStart(6)} req/s  p50 ${f.p50.toFixed(0).padStart(3)} ms  p99 ${f.p99
    .toFixed(0)
    .padStart(4)} ms  store ${f.storeMs.toFixed(3)} ms/req  hosts ${f.hostsMs.toFixed(3)} ms/req  ` +
  `store sessions ≤ ${f.sessions}` +
  (one
    ? `   × one host: req/s ${(f.rps / one.rps).toFixed(2)}, store CPU/req ${(f.storeMs / one.storeMs).toFixed(2)}, ` +
      `hosts' CPU/req ${(f.hostsMs / one.hostsMs).toFixed(2)}`
    : '');

async function main() {
  const cpus = os.cpus();
  console.log(
    `node ${process.version}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}; hosts ${HOSTS.join(', ')} and back; ` +
      `${LIST} list, ${CONNECTIONS} connections, ${SECONDS} s a phase; load average ${loadAverages()}`,
  );
  for (const db of [STORE, DST]) await createDatabase(db);
  // The hosts running now (stopped at the end of each count, or on a failure).
  let hosts: Host[] = [];
  try {
    await sql(DST, 'create table ticks (n integer)');
    // The store's content: RUNS finished runs (each with its steps and events), run by a worker.
    const p = await openPlatform({
      DATABASE_URL: dbUrl(STORE),
      SLUICE_MASTER_KEY: masterKey,
      SLUICE_DATA_DIR: scratch,
    });
    const apiKey = p.apiKey;
    try {
      await setUpTick(p, DST);
      const worker = await startWorker({
        DATABASE_URL: dbUrl(STORE),
        SLUICE_MASTER_KEY: masterKey,
        SLUICE_DATA_DIR: scratch,
      });
      try {
        await sluiceRuns(p, RUNS, 0, 'tick', [worker]);
      } finally {
        await worker.stop();
      }
    } finally {
      await p.close();
    }
    console.log(`store seeded: ${RUNS} finished runs`);

    const order = [...HOSTS, ...[...HOSTS].reverse()];
    const book = new Map<number, { rated: Figure[]; open: Figure[] }>();
    for (const n of order) {
      hosts = await startHosts(n);
      // Every host answers the same page as the others.
      const pages = await Promise.all(
        hosts.map(async (h) => {
          const res = await fetch(h.url, { headers: { authorization: `Bearer ${apiKey}` } });
          if (res.status !== 200) throw new Error(`${h.url}: ${res.status}`);
          return res.text();
        }),
      );
      if (pages.some((page) => page !== pages[0])) throw new Error('the hosts answered different pages');
      if (LIST === 'runs' && JSON.parse(pages[0]).runs?.length !== Math.min(20, RUNS))
        throw new Error(`the runs list's first page holds ${JSON.parse(pages[0]).runs?.length} runs`);
      // Unmeasured: each fresh host compiles its request path and fills its pool first.
      await startApiLoad(
        hosts.map((h) => h.url),
        apiKey,
        0,
        3,
        CONNECTIONS,
      ).done;
      // Idle: what the hosts and the store spend with no request (timers, pool upkeep).
      const idle0 = hosts.map((h) => cpuSeconds(h.proc.pid));
      const idleStore = sampleCpu({ store: backendsOf(STORE) }, {}, 200);
      await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
      const idleHostsMs = hosts.reduce((t, h, i) => t + cpuSeconds(h.proc.pid) - idle0[i], 0) * 1000;
      const idleStoreMs = idleStore.stop().totals.store * 1000;
      const rated = await phase(hosts, apiKey, RATE);
      const open = await phase(hosts, apiKey, 0);
      console.log(`\n${n} API host(s) (load average ${loadAverages()})`);
      console.log(
        `  idle ${IDLE_SECONDS} s: hosts ${(idleHostsMs / IDLE_SECONDS / n).toFixed(1)} ms of CPU a second each, ` +
          `store ${(idleStoreMs / IDLE_SECONDS).toFixed(1)} ms a second`,
      );
      console.log(line(`${RATE} req/s asked`, rated));
      console.log(line('as many as answered', open));
      const entry = book.get(n) ?? { rated: [], open: [] };
      entry.rated.push(rated);
      entry.open.push(open);
      book.set(n, entry);
      for (const h of hosts.splice(0)) await h.proc.stop();
    }

    // Per count: the mean of its rounds (early and late), against one host's.
    const mean = (fs: Figure[]): Figure => {
      const avg = (k: keyof Figure) => fs.reduce((s, f) => s + f[k], 0) / fs.length;
      return {
        rps: avg('rps'),
        p50: avg('p50'),
        p99: avg('p99'),
        storeMs: avg('storeMs'),
        hostsMs: avg('hostsMs'),
        sessions: Math.max(...fs.map((f) => f.sessions)),
      };
    };
    const one = book.get(HOSTS[0])!;
    console.log(`\nmeans over the rounds, against ${HOSTS[0]} host(s):`);
    for (const [n, e] of book) {
      console.log(`${n} API host(s)`);
      console.log(line(`${RATE} req/s asked`, mean(e.rated), mean(one.rated)));
      console.log(line('as many as answered', mean(e.open), mean(one.open)));
    }
    console.log(`load average ${loadAverages()}`);
  } finally {
    for (const h of hosts) await h.proc.stop().catch(() => {});
    await endWatch();
    for (const db of [STORE, DST]) await dropDatabase(db).catch(() => {});
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
