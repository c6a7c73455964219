// `npm run bench:pipeline`: pipeline throughput and worker memory against plain `psql` COPY.
// Not a test: it prints figures; docs/benchmarks.md records them and the targets.
//
// Runs go the full product path: the API (in this process) on a scratch platform database
// creates data sources, pushes, binds, validates, deploys and executes; a fresh `sluice worker`
// process per run claims and executes it, and its resident memory is sampled every 100 ms.
//
//   BENCH_ROWS=1000000,5000000   PostgreSQL → PostgreSQL row counts (peak RSS must stay flat); each
//                                runs twice: a plain copy, and with cursor_column (incremental source)
//   BENCH_HTTP_ROWS=300000       HTTP JSON → DuckDB → PostgreSQL records (one response: the 50 MiB
//                                response bound of docs/connectors/http.md caps it near 450,000)
//   BENCH_CPU_PROF=dir           write a V8 CPU profile of each worker into dir
//   BENCH_PERF=dir               Linux `perf record` of each measured worker, native frames too
//                                (BENCH_PERF_EVENT=page-faults: where memory is first touched)
//   BENCH_HTTP_WARM=1            the HTTP case also runs in a worker that ran it once before
//                                (DuckDB's module loaded, as in a long-running worker)
//   BENCH_RUN_LOG=1              print each measured run's log (which way each step took)
//   BENCH_BASELINE=dir           HTTP case A/B: after its measured runs, BENCH_AB_PAIRS pairs,
//                                each a fresh and a warm worker of another compiled build (e.g.
//                                packages/cli/.dist-main, a copy of packages/cli/dist built from
//                                main) and of this one, the order alternating, `\copy` around each
//   BENCH_AB_PAIRS=0             after each PostgreSQL row count's figures, that many pairs of runs
//                                (4 when BENCH_BASELINE is set and this is not),
//                                the order alternating, the limit around each pair: the plain copy
//                                against the cursor_column one, or with BENCH_BASELINE=dir (a copy
//                                of packages/cli/dist built from main, e.g. packages/cli/.dist-main)
//                                that build's worker against this one's (BENCH_CANDIDATE=dir: the
//                                "this" side and the measured runs from another build too)
//   BENCH_WARM=1                 the PostgreSQL → PostgreSQL runs too in a worker that ran them before
//   BENCH_STATEMENT_LOG=file     the workers append every statement and its answer's time there
//   BENCH_WORKER_NODE_ARGS=…     node options for each run's worker, space-separated (V8 flags
//                                NODE_OPTIONS refuses, e.g. --min-semi-space-size=16)
//   BENCH_TIMELINE=1             print each run's CPU timeline (worker, source and target backends, the
//                                server's WAL writer etc.) in 100 ms buckets (or =25: 25 ms buckets)
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { httpToPg, type RunInFreshWorker } from './pipeline-http';
import {
  copyFileLimit,
  count,
  createDatabase,
  dbUrl,
  deployCopyPipeline,
  dropDatabase,
  fillRows,
  limitFile,
  openPlatform,
  type Platform,
  pgDataSource,
  ROW_COLUMNS,
  removeLimitFiles,
  resetTarget,
  shell,
  sql,
  writeLimitFile,
} from './pipeline-support';
import { backendsOf, coreBound, pgServerProcesses } from './proc-cpu';
import { runInWorker } from './worker-process';

const ROWS = (process.env.BENCH_ROWS ?? '1000000,5000000').split(',').map(Number);
const HTTP_ROWS = Number(process.env.BENCH_HTTP_ROWS ?? 300_000);
const PROF_DIR = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;
const BASELINE = process.env.BENCH_BASELINE ?? '';
const AB_PAIRS = Number(process.env.BENCH_AB_PAIRS ?? (BASELINE ? 4 : 0));
const CANDIDATE = process.env.BENCH_CANDIDATE ?? '';
/**
 * BENCH_WARM=1: every PostgreSQL → PostgreSQL run is measured in a worker that ran it once
 * before (the target emptied between): its connections pooled, its statements known, as in a
 * long-running worker; without, a fresh worker's first run (its first-use costs counted).
 */
const warmPg = process.env.BENCH_WARM === '1' ? () => resetTarget(DST, 'dst', COLUMNS) : undefined;

const id = `${process.pid}`;
const STORE = `sluice_bench_store_${id}`;
const SRC = `sluice_bench_src_${id}`;
const DST = `sluice_bench_dst_${id}`;

// Ten columns: ints, a bigint, numerics, text, timestamps, a boolean and a nullable text.
const COLUMNS = ROW_COLUMNS;

type Row = {
  label: string;
  rows: number;
  rps: number;
  baseline: number;
  baselineLabel: string;
  /** The target server's binary COPY FROM a file of the same rows (PostgreSQL rows only). */
  limit?: number;
  rss?: string;
};
const results: Row[] = [];
const load = () => os.loadavg()[0].toFixed(1);

const fillSource = (n: number) => fillRows(SRC, 'src', n);

/** Count and an order-free checksum of every row's text. */
async function checksum(db: string, table: string) {
  const r = await sql(
    db,
    `select count(*)::text || ':' || sum(hashtext(t::text)::bigint)::text as c from ${table} t`,
  );
  return r[0].c as string;
}

/** `psql … COPY src TO STDOUT | psql … COPY dst FROM STDIN`: rows/s. */
async function copyBaseline(n: number): Promise<number> {
  await resetTarget(DST, 'dst', COLUMNS);
  const ms = await shell(
    `psql -X -q "${dbUrl(SRC)}" -c "COPY src TO STDOUT" | psql -X -q "${dbUrl(DST)}" -c "COPY dst FROM STDIN"`,
  );
  if ((await count(DST, 'dst')) !== n) throw new Error('COPY baseline loaded a different row count');
  const rps = n / (ms / 1000);
  console.log(
    `  psql COPY | psql COPY        ${rps.toFixed(0).padStart(8)} rows/s  (${(ms / 1000).toFixed(1)} s)`,
  );
  return rps;
}

const sluiceRun = (p: Platform, ...[pipeline, n, target, tag, warm, dist]: Parameters<RunInFreshWorker>) =>
  runInWorker(p, pipeline, n, () => count(target[0], target[1]), {
    env: { DATABASE_URL: dbUrl(STORE), SLUICE_MASTER_KEY: masterKey, SLUICE_DATA_DIR: dataDir },
    profDir: PROF_DIR ? path.join(PROF_DIR, tag) : null,
    warm,
    targetDb: target[0],
    ...(dist ? { dist } : CANDIDATE ? { dist: CANDIDATE } : {}),
    cpuGroups: { source: backendsOf(SRC), target: backendsOf(target[0]), server: pgServerProcesses },
  });

async function pgToPg(p: Platform) {
  await p.call('POST', '/organizations/acme/data-sources', pgDataSource('source-db', SRC, true));
  await p.call('POST', '/organizations/acme/data-sources', pgDataSource('target-db', DST));
  await deployCopyPipeline(
    p,
    'pg-to-pg',
    { ref: 'source-db', table: 'src' },
    { ref: 'target-db', table: 'dst' },
  );
  // The same copy as an incremental source: the next cursor is the greatest created_at.
  await deployCopyPipeline(
    p,
    'pg-to-pg-cursor',
    { ref: 'source-db', table: 'src', cursorColumn: 'created_at' },
    { ref: 'target-db', table: 'dst' },
  );
  for (const n of ROWS) {
    console.log(`\nPostgreSQL → PostgreSQL, ${n.toLocaleString('en')} rows (load average ${load()})`);
    await fillSource(n);
    // The limit: the target's own binary COPY FROM a file of the same rows, into the same
    // table (logged, with its primary key, as the sink's target), around each Sluice run.
    const file = limitFile(`pg-${n}`);
    await writeLimitFile(SRC, 'SELECT * FROM src', file);
    const limit = async () => {
      await resetTarget(DST, 'dst', COLUMNS);
      return copyFileLimit(DST, 'dst', file, n);
    };
    // Unmeasured: the first large COPY after the fill finds few recycled WAL segments (the
    // server keeps min_wal_size after each checkpoint) and zero-fills new ones; whichever
    // measurement came first was up to 1.8× slower (docs/benchmarks.md, 2026-11-29 09:00).
    const warmUp = await limit();
    console.log(`  (that limit was the WAL warm-up, not counted: ${(n / warmUp).toFixed(2)} s)`);
    const before = await copyBaseline(n);
    const limitBefore = await limit();
    await resetTarget(DST, 'dst', COLUMNS);
    const s = await sluiceRun(p, 'pg-to-pg', n, [DST, 'dst'], `pg-to-pg-${n}`, warmPg);
    const [want, got] = [await checksum(SRC, 'src'), await checksum(DST, 'dst')];
    if (want !== got) throw new Error(`the target's rows differ from the source's: ${got} ≠ ${want}`);
    console.log(`  rows checked: count and sum(hashtext(row)) equal to the source's (${got})`);
    const between = await copyBaseline(n);
    const limitBetween = await limit();
    console.log(`  with cursor_column created_at (the next cursor is its greatest value):`);
    await resetTarget(DST, 'dst', COLUMNS);
    const c = await sluiceRun(p, 'pg-to-pg-cursor', n, [DST, 'dst'], `pg-to-pg-cursor-${n}`, warmPg);
    if ((await checksum(DST, 'dst')) !== want)
      throw new Error("the cursor run's rows differ from the source's");
    const after = await copyBaseline(n);
    const limitAfter = await limit();
    const baseline = (before + between) / 2;
    const cursorBaseline = (between + after) / 2;
    const limitRps = (limitBefore + limitBetween) / 2;
    const cursorLimit = (limitBetween + limitAfter) / 2;
    console.log(
      `  ratio to COPY (mean of the runs around it): execute→finished ${(s.wallRps / baseline).toFixed(2)}, ` +
        `run clock ${(s.rps / baseline).toFixed(2)}; with cursor_column ${(c.wallRps / cursorBaseline).toFixed(2)}`,
    );
    console.log(
      `  ratio to the limit (server COPY FROM file, mean around it): execute→finished ${(s.wallRps / limitRps).toFixed(2)}, ` +
        `run clock ${(s.rps / limitRps).toFixed(2)}; with cursor_column ${(c.wallRps / cursorLimit).toFixed(2)}; ` +
        `the pipe ${(baseline / limitRps).toFixed(2)}`,
    );
    if (s.cpu) console.log(`  plain: ${coreBound(s.cpu, n / limitRps)}`);
    if (c.cpu) console.log(`  cursor_column: ${coreBound(c.cpu, n / cursorLimit)}`);
    if (AB_PAIRS > 0) await abPairs(p, n, limit, want);
    results.push({
      label: 'PostgreSQL → PostgreSQL',
      rows: n,
      rps: s.wallRps,
      baseline,
      baselineLabel: 'psql COPY → psql COPY',
      limit: limitRps,
      rss: `${s.peakMB.toFixed(0)} MB`,
    });
    results.push({
      label: 'PostgreSQL → PostgreSQL, cursor_column',
      rows: n,
      rps: c.wallRps,
      baseline: cursorBaseline,
      baselineLabel: 'psql COPY → psql COPY',
      limit: cursorLimit,
      rss: `${c.peakMB.toFixed(0)} MB`,
    });
  }
  await sql(SRC, 'drop table if exists src');
  await sql(DST, 'drop table if exists dst');
}

/**
 * BENCH_AB_PAIRS: pairs of fresh-worker runs, the order alternating, the limit measured before
 * and after each pair, every load checksummed. With BENCH_BASELINE the two sides are that
 * build's worker and this one's (the plain copy); without, the plain copy and the cursor_column
 * one on this build (the same COPY pass-through, see docs/benchmarks.md).
 */
async function abPairs(p: Platform, n: number, limit: () => Promise<number>, want: string) {
  type Side = { label: string; pipeline: string; dist?: string };
  const sides: Side[] = BASELINE
    ? [
        { label: 'baseline', pipeline: 'pg-to-pg', dist: BASELINE },
        { label: 'this', pipeline: 'pg-to-pg', ...(CANDIDATE ? { dist: CANDIDATE } : {}) },
      ]
    : [
        { label: 'plain', pipeline: 'pg-to-pg' },
        { label: 'cursor_column', pipeline: 'pg-to-pg-cursor' },
      ];
  type Seen = { ratio: number; worker: number; source: number; target: number };
  const seen = new Map<string, Seen[]>(sides.map((s) => [s.label, []]));
  for (let i = 0; i < AB_PAIRS; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    const atStart = load();
    const limitBefore = await limit();
    const runs = new Map<string, Awaited<ReturnType<typeof sluiceRun>>>();
    for (const side of order) {
      await resetTarget(DST, 'dst', COLUMNS);
      const r = await sluiceRun(
        p,
        side.pipeline,
        n,
        [DST, 'dst'],
        `ab-${side.label}-${i}`,
        warmPg,
        side.dist,
      );
      if ((await checksum(DST, 'dst')) !== want) throw new Error(`the ${side.label} run's rows differ`);
      runs.set(side.label, r);
    }
    const limitRps = (limitBefore + (await limit())) / 2;
    const line = order.map((side) => {
      const r = runs.get(side.label)!;
      const s = {
        ratio: r.wallRps / limitRps,
        worker: r.workerCpuMs / 1000,
        source: r.cpu?.source ?? 0,
        target: r.cpu?.target ?? 0,
      };
      seen.get(side.label)!.push(s);
      return `${side.label} ${s.ratio.toFixed(2)} (CPU worker ${s.worker.toFixed(2)}, source ${s.source.toFixed(2)}, target ${s.target.toFixed(2)} s)`;
    });
    console.log(`  A/B pair ${i + 1} (load ${atStart}), ratio to the limit: ${line.join('; ')}`);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const side of sides) {
    const xs = seen.get(side.label)!;
    console.log(
      `  A/B ${side.label.padEnd(13)} mean ratio to the limit ${mean(xs.map((x) => x.ratio)).toFixed(2)}; mean CPU ` +
        `worker ${mean(xs.map((x) => x.worker)).toFixed(2)} s, source ${mean(xs.map((x) => x.source)).toFixed(2)} s, ` +
        `target ${mean(xs.map((x) => x.target)).toFixed(2)} s (${side.dist ?? 'this checkout'})`,
    );
  }
}

const masterKey = crypto.randomBytes(32).toString('base64');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-pipeline-'));

async function main() {
  const cpus = os.cpus();
  console.log(
    `node ${process.version}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; ` +
      `rows ${ROWS.join(', ')}, HTTP records ${HTTP_ROWS}; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  if (PROF_DIR) fs.mkdirSync(PROF_DIR, { recursive: true });
  for (const db of [STORE, SRC, DST]) await createDatabase(db);
  let p: Platform | null = null;
  try {
    p = await openPlatform({
      DATABASE_URL: dbUrl(STORE),
      SLUICE_MASTER_KEY: masterKey,
      SLUICE_DATA_DIR: dataDir,
    });
    await p.call('POST', '/organizations/acme/projects', { name: 'Bench', slug: 'bench' });
    await p.call('POST', '/organizations/acme/environments', { name: 'Bench', slug: 'bench' });
    await p.call('PUT', '/organizations/acme/projects/bench/environments/bench');
    if (ROWS.some((n) => n > 0)) await pgToPg(p);
    if (HTTP_ROWS > 0) {
      const platform = p;
      const h = await httpToPg({
        p: platform,
        n: HTTP_ROWS,
        dst: DST,
        dataDir,
        createTarget: !ROWS.some((r) => r > 0),
        warm: process.env.BENCH_HTTP_WARM === '1',
        baseline: BASELINE,
        abPairs: AB_PAIRS,
        load,
        run: (...a) => sluiceRun(platform, ...a),
      });
      results.push({
        label: 'HTTP JSON → DuckDB → PostgreSQL',
        rows: HTTP_ROWS,
        rps: h.rps,
        baseline: h.baseline,
        baselineLabel: 'psql \\copy from CSV',
        rss: `${h.peakMB.toFixed(0)} MB`,
      });
    }
  } finally {
    await p?.close().catch(() => {});
    for (const db of [STORE, SRC, DST]) await dropDatabase(db).catch(() => {});
    fs.rmSync(dataDir, { recursive: true, force: true });
    removeLimitFiles();
  }

  console.log(`\nload average after the runs: ${load()} (other work on the machine skews every figure)`);
  console.log(
    '| pipeline | rows | Sluice rows/s (execute→finished) | baseline | baseline rows/s | ratio | limit rows/s | ratio to limit | worker peak RSS |',
  );
  console.log('|---|---:|---:|---|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.label} | ${r.rows.toLocaleString('en')} | ${r.rps.toFixed(0)} | ${r.baselineLabel} | ` +
        `${r.baseline.toFixed(0)} | ${(r.rps / r.baseline).toFixed(2)} | ${r.limit?.toFixed(0) ?? ''} | ` +
        `${r.limit ? (r.rps / r.limit).toFixed(2) : ''} | ${r.rss ?? ''} |`,
    );
  }
  const pgRows = results.filter((r) => r.label.startsWith('PostgreSQL'));
  if (pgRows.length > 0) {
    const worst = Math.min(...pgRows.map((r) => r.rps / r.baseline));
    const peaks = pgRows.map((r) => Number.parseFloat(r.rss ?? '0'));
    console.log(
      `\ntargets (PostgreSQL → PostgreSQL): ratio ≥ 0.8 (execute→finished) → ${worst.toFixed(2)} ${worst >= 0.8 ? 'met' : 'MISSED'}; ` +
        `worker peak < 250 MB → ${peaks.join(' / ')} MB ${Math.max(...peaks) < 250 ? 'met' : 'MISSED'} (flatness from 1M to 10M: npm run bench:memory)`,
    );
    const toLimit = Math.min(...pgRows.map((r) => r.rps / r.limit!));
    console.log(
      `target (issue 26 item 8): ≥ 0.9 of the limit (server binary COPY FROM file) → ${toLimit.toFixed(2)} ${toLimit >= 0.9 ? 'met' : 'MISSED'}`,
    );
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
