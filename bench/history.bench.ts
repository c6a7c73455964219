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
//   BENCH_HISTORY_WAL_RUNS=100         runs per store whose WAL is measured (history-wal.ts; 0: none)
//   BENCH_HISTORY_LISTS=0              skip the list and log paths (the executes and the WAL only)
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
import { historyPaths } from './history-paths';
import { seed, sizes } from './history-seed';
import { deployBroken, executeOnce, openStore, type Store } from './history-store';
import {
  gcSummary,
  gcs,
  type Io,
  io,
  pct,
  ratioInterval,
  type Sample,
  tail,
  timed,
  within,
} from './history-tail';
import { walPerRun } from './history-wal';
import { createDatabase, dropDatabase, loadAverages, sql } from './pipeline-support';

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
const WAL_RUNS = Number(process.env.BENCH_HISTORY_WAL_RUNS ?? 100);
const LISTS = process.env.BENCH_HISTORY_LISTS !== '0';
const PIPELINES = 10;
const SEED_CONNECTIONS = Number(process.env.BENCH_HISTORY_SEED_CONNECTIONS ?? 2);

const id = `${process.pid}`;
const EMPTY = `sluice_bench_hist_empty_${id}`;
const SEEDED = kept?.seeded ?? `sluice_bench_hist_seeded_${id}`;
const DST = kept?.dst ?? `sluice_bench_hist_dst_${id}`;
const masterKey = kept?.masterKey ?? crypto.randomBytes(32).toString('base64');
// Runs this invocation executes, by a prefix of its own (a reused store has an earlier one's).
const mine = (kind: 'x' | 'f' | 'w', i: number) => `${kind}${id}n${i}`;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-history-'));
const load = loadAverages;
const n = (x: number) => x.toLocaleString('en-US');
const storeOptions = { masterKey, dataDir, dst: DST, pipelines: PIPELINES };

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
    stores.push(await openStore(EMPTY, storeOptions));
    stores.push(await openStore(SEEDED, storeOptions, kept?.apiKey));
    const [empty, seeded] = stores as [Store, Store];
    if (!kept) {
      await seed(seeded, {
        runs: RUNS,
        logLines: LOG_LINES,
        events: EVENTS,
        pipelines: PIPELINES,
        runDays: 180,
        eventDays: 27,
        chunk: 500_000,
        connections: SEED_CONNECTIONS,
      });
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

    const wal = WAL_RUNS > 0 ? await walPerRun(stores, WAL_RUNS, (i) => mine('w', i)) : [];
    for (const w of wal)
      console.log(
        `  WAL per run, ${w.store === EMPTY ? 'empty ' : 'seeded'} store (${n(WAL_RUNS)} runs after a checkpoint): ` +
          `${n(Math.round(w.bytes))} bytes, ${w.fpi.toFixed(1)} full-page images (WAL ${w.from}–${w.to})`,
      );

    const paths = !LISTS
      ? []
      : await historyPaths(empty, seeded, {
          executes: EXECUTES,
          runs: RUNS,
          events: EVENTS,
          draw: DRAW,
          mine,
        });
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
    for (const s of LISTS ? stores : []) {
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
    if (LISTS) {
      console.log(`\n  the lists again, each request less this process's collections overlapping it`);
      for (const r of results) if (r.net) row(r.label, r.net.empty, r.net.seeded);
    }
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
