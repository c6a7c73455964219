// `npm run bench:mariadb`: MariaDB → PostgreSQL throughput against the fastest faithful shell
// pipe (`mariadb --batch --quick | psql \copy`) and against Debian's pgloader, all in one run.
// Not a test: it prints figures; docs/benchmarks.md records them and the targets.
//
// The Sluice run goes the whole product path (the API in this process creates the data
// sources, deploys and executes; a fresh `sluice worker` process claims and runs it) and is
// timed from execute until the run is finished. Every load is checked afterwards: the row
// count, sums of the numeric columns against MariaDB's own, and an order-free checksum of every
// row's text that must equal the shell pipe's.
//
//   BENCH_ROWS=1000000     row counts, comma-separated
//   SLUICE_BENCH_MYSQL     mysql://root@127.0.0.1:3306 (the MariaDB server; no password)
//   BENCH_BASELINE=dir     A/B: after the measured run, BENCH_AB_PAIRS pairs of runs, one with
//                          workers of another compiled build (e.g. packages/cli/.dist-main, a
//                          copy of packages/cli/dist built from main) and one with this one,
//                          the order alternating, the limit measured around each pair
//   BENCH_AB_PAIRS=3
//   BENCH_WARM=1           each run in a worker that ran it once before (a long-running worker)
//   BENCH_CANDIDATE=dir    the measured run and the "this" side of the A/B from another compiled
//                          build too (default: this checkout's `sluice`)
//   BENCH_PERF=dir         Linux `perf record` of each measured worker, native frames too
//                          (BENCH_PERF_EVENT=page-faults: where memory is first touched)
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  copyFileLimit,
  createDatabase,
  dbUrl,
  deployCopyPipeline,
  dropDatabase,
  limitFile,
  openPlatform,
  type Platform,
  pgDataSource,
  removeLimitFiles,
  shell,
  sql,
  writeLimitFile,
} from './pipeline-support';
import { backendsOf, coreBound, pgServerProcesses } from './proc-cpu';
import { runInWorker } from './worker-process';

const ROWS = (process.env.BENCH_ROWS ?? '1000000').split(',').map(Number);
const MY = new URL(process.env.SLUICE_BENCH_MYSQL ?? 'mysql://root@127.0.0.1:3306');
const id = `${process.pid}`;
const STORE = `sluice_bench_mstore_${id}`;
const DST = `sluice_bench_mdst_${id}`;
const MYDB = `sluice_bench_msrc_${id}`;
const load = () => os.loadavg()[0].toFixed(1);
const BASELINE = process.env.BENCH_BASELINE ?? '';
const AB_PAIRS = Number(process.env.BENCH_AB_PAIRS ?? 3);
const CANDIDATE = process.env.BENCH_CANDIDATE ?? '';
/**
 * Whose CPU a run is billed beside its worker's: MariaDB (the whole server: another client's
 * work on it at the same time counts too), the target's backends, PostgreSQL's own processes.
 */
/**
 * BENCH_WARM=1: each run measured in a worker that ran it once before (the target emptied
 * between): the MySQL driver loaded, connections pooled, as in a long-running worker.
 */
const WARM = process.env.BENCH_WARM === '1' ? () => resetTarget() : undefined;
const MARIA_CPU = {
  source: (cmd: string) => /^\S*(mariadbd|mysqld)\b/.test(cmd),
  target: backendsOf(DST),
  server: pgServerProcesses,
};

const myArgs = [
  '--default-character-set=utf8mb4',
  '-h',
  MY.hostname,
  '-P',
  MY.port || '3306',
  '-u',
  decodeURIComponent(MY.username || 'root'),
];
const myShell = `mariadb ${myArgs.join(' ')}${MY.password ? ` -p'${decodeURIComponent(MY.password)}'` : ''}`;
const my = (statement: string, db = '') =>
  execFileSync(
    'mariadb',
    [
      ...myArgs,
      ...(MY.password ? [`-p${decodeURIComponent(MY.password)}`] : []),
      '--batch',
      '--skip-column-names',
      ...(db ? [db] : []),
      '-e',
      statement,
    ],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  ).trim();

// Ten columns: ints, a bigint, decimals, text (a tab, a backslash and unicode in some rows),
// a datetime with microseconds, a boolean and a nullable text.
const MY_COLUMNS = `id int primary key, qty int, big bigint, amount decimal(12,2), ratio decimal(20,6),
  name varchar(100), email varchar(100), created_at datetime(6), active boolean, note text`;
const PG_COLUMNS = `id integer primary key, qty integer, big bigint, amount numeric(12,2), ratio numeric(20,6),
  name varchar(100), email varchar(100), created_at timestamp, active boolean, note text`;

/** Debian's pgloader, installed when missing (other sessions may hold apt's lock: wait). */
function ensurePgloader() {
  if (fs.existsSync('/usr/bin/pgloader')) return;
  execFileSync('apt-get', ['update'], { stdio: 'ignore' });
  execFileSync(
    'apt-get',
    ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '--no-install-recommends', 'pgloader'],
    {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    },
  );
}

function fillSource(n: number) {
  my('drop table if exists src', MYDB);
  my(`create table src (${MY_COLUMNS})`, MYDB);
  my(
    `insert into src
       select seq, seq % 1000, seq * 1000003, (seq % 100000) / 100, seq / 7,
              concat('name ', seq, if(seq % 1000 = 0, ' \\t\\\\ ü 😀', '')), concat('user', seq, '@example.com'),
              timestamp '2024-01-01 00:00:00' + interval seq second + interval (seq % 1000) microsecond,
              seq % 2 = 0, if(seq % 3 = 0, null, concat('note ', seq))
         from seq_1_to_${n}`,
    MYDB,
  );
}

async function resetTarget() {
  await sql(DST, 'drop table if exists dst');
  await sql(DST, `create table dst (${PG_COLUMNS})`);
  await sql('postgres', 'checkpoint');
}

/** Count, sums and an order-free checksum of every row's text on the PostgreSQL side. */
async function pgCheck() {
  const r = await sql(
    DST,
    `select count(*)::text || ' ' || sum(id)::text || ' ' || sum(big)::text || ' ' || sum(amount)::text || ' ' ||
            sum(ratio)::text || ' ' || count(note)::text || ' ' || sum(hashtext(t::text)::bigint)::text as c from dst t`,
  );
  return r[0].c as string;
}
/** The same count and sums on MariaDB (without the row checksum). */
const myCheck = () =>
  my(
    "select concat_ws(' ', count(*), sum(id), sum(big), sum(amount), sum(ratio), count(note)) from src",
    MYDB,
  );

function checked(what: string, pg: string, expected: { sums: string; full: string | null }) {
  const sums = pg.split(' ').slice(0, 6).join(' ');
  if (sums !== expected.sums) throw new Error(`${what}: count/sums ${sums} ≠ MariaDB's ${expected.sums}`);
  if (expected.full !== null && pg !== expected.full)
    throw new Error(`${what}: row checksum ${pg} ≠ the shell pipe's ${expected.full}`);
}

/** `mariadb --batch --quick | psql \copy`: tab-separated, escaped (\t \n \\), NULL spelled NULL. */
async function pipeBaseline(n: number): Promise<{ rps: number; check: string }> {
  await resetTarget();
  // No text value of this table is the string 'NULL', so null 'NULL' is exact here.
  const ms = await shell(
    `${myShell} --batch --quick --skip-column-names ${MYDB} -e "select * from src" | ` +
      `psql -X -q "${dbUrl(DST)}" -c "\\copy dst from stdin with (null 'NULL')"`,
  );
  const check = await pgCheck();
  const rps = n / (ms / 1000);
  console.log(
    `  mariadb | psql \\copy         ${rps.toFixed(0).padStart(8)} rows/s  (${(ms / 1000).toFixed(1)} s)`,
  );
  return { rps, check };
}

/** pgloader, data only, into the same existing table. */
async function pgloaderBaseline(n: number, dir: string): Promise<{ rps: number; check: string }> {
  await resetTarget();
  const cmd = path.join(dir, 'load.pgl');
  const from = `mysql://${MY.username || 'root'}${MY.password ? `:${MY.password}` : ''}@${MY.hostname}:${MY.port || 3306}/${MYDB}`;
  fs.writeFileSync(
    cmd,
    `LOAD DATABASE FROM ${from} INTO ${dbUrl(DST)}
       WITH data only, workers = 2, concurrency = 1
       INCLUDING ONLY TABLE NAMES MATCHING 'src'
       ALTER TABLE NAMES MATCHING 'src' RENAME TO 'dst'
       ALTER SCHEMA '${MYDB}' RENAME TO 'public';\n`,
  );
  const ms = await shell(`pgloader --no-ssl-cert-verification --quiet ${cmd}`);
  const check = await pgCheck();
  const rps = n / (ms / 1000);
  console.log(
    `  pgloader                     ${rps.toFixed(0).padStart(8)} rows/s  (${(ms / 1000).toFixed(1)} s)`,
  );
  return { rps, check };
}

type Result = {
  rows: number;
  sluice: number;
  pipe: number;
  pgloader: number;
  limit: number;
  rss: number;
  load: string;
};
const results: Result[] = [];
const masterKey = crypto.randomBytes(32).toString('base64');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-mariadb-'));

async function bench(p: Platform) {
  await p.call('POST', '/organizations/acme/data-sources', {
    type: 'mysql',
    name: 'maria',
    slug: 'maria',
    read_only: true,
    config: {
      host: MY.hostname,
      port: Number(MY.port || 3306),
      database: MYDB,
      user: decodeURIComponent(MY.username || 'root'),
      statement_timeout_seconds: 300,
      allow_private_hosts: true,
    },
    credentials: { password: decodeURIComponent(MY.password) },
  });
  await p.call('POST', '/organizations/acme/data-sources', pgDataSource('target-db', DST));
  await deployCopyPipeline(
    p,
    'maria-to-pg',
    { ref: 'maria', table: 'src' },
    { ref: 'target-db', table: 'dst' },
  );
  for (const n of ROWS) {
    console.log(`\nMariaDB → PostgreSQL, ${n.toLocaleString('en')} rows (load average ${load()})`);
    fillSource(n);
    const sums = myCheck().replace(/\t/g, ' ');
    const before = await pipeBaseline(n);
    checked('shell pipe', before.check, { sums, full: null });
    // The limit: PostgreSQL's own binary COPY FROM a file of the same rows (written from the
    // pipe's checked load), into the same table (logged, with its primary key, as the sink's).
    const file = limitFile(`maria-${n}`);
    await writeLimitFile(DST, 'SELECT * FROM dst', file);
    const limit = async () => {
      await resetTarget();
      const rps = await copyFileLimit(DST, 'dst', file, n);
      checked('limit', await pgCheck(), { sums, full: before.check });
      return rps;
    };
    const limitBefore = await limit();
    const loader = await pgloaderBaseline(n, dataDir);
    checked('pgloader', loader.check, { sums, full: before.check });
    await resetTarget();
    const s = await runInWorker(p, 'maria-to-pg', n, async () => Number(before.check.split(' ')[0]), {
      env: { DATABASE_URL: dbUrl(STORE), SLUICE_MASTER_KEY: masterKey, SLUICE_DATA_DIR: dataDir },
      profDir: process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF, `maria-${n}`) : null,
      targetDb: DST,
      cpuGroups: MARIA_CPU,
      warm: WARM,
      ...(CANDIDATE ? { dist: CANDIDATE } : {}),
    });
    checked('Sluice', await pgCheck(), { sums, full: before.check });
    console.log('  rows checked: count, sums and row checksum equal across the three loads');
    const after = await pipeBaseline(n);
    const limitAfter = await limit();
    const pipe = (before.rps + after.rps) / 2;
    const limitRps = (limitBefore + limitAfter) / 2;
    console.log(
      `  ratio to the shell pipe (mean of before/after): ${(s.wallRps / pipe).toFixed(2)} (execute→finished), ` +
        `${(s.rps / pipe).toFixed(2)} (run clock); to pgloader: ${(s.wallRps / loader.rps).toFixed(2)}×`,
    );
    console.log(
      `  ratio to the limit (server COPY FROM file, mean of before/after): ${(s.wallRps / limitRps).toFixed(2)} ` +
        `(execute→finished), ${(s.rps / limitRps).toFixed(2)} (run clock); the pipe ${(pipe / limitRps).toFixed(2)}, ` +
        `pgloader ${(loader.rps / limitRps).toFixed(2)}`,
    );
    if (s.cpu) console.log(`  ${coreBound(s.cpu, n / limitRps)}`);
    if (BASELINE) await abPairs(p, n, limit, { sums, full: before.check });
    results.push({
      rows: n,
      sluice: s.wallRps,
      pipe,
      pgloader: loader.rps,
      limit: limitRps,
      rss: s.peakMB,
      load: load(),
    });
  }
}

/** BENCH_BASELINE: pairs of runs, the other build's worker and this one's, order alternating. */
async function abPairs(
  p: Platform,
  n: number,
  limit: () => Promise<number>,
  expected: { sums: string; full: string },
) {
  const seen: Record<string, { ratio: number; cpu: number }[]> = { baseline: [], this: [] };
  for (let i = 0; i < AB_PAIRS; i++) {
    const order = i % 2 === 0 ? ['baseline', 'this'] : ['this', 'baseline'];
    const atStart = load();
    const limitBefore = await limit();
    const runs: Record<string, { wallRps: number; cpu: number }> = {};
    for (const build of order) {
      await resetTarget();
      const s = await runInWorker(p, 'maria-to-pg', n, async () => Number(expected.full.split(' ')[0]), {
        env: { DATABASE_URL: dbUrl(STORE), SLUICE_MASTER_KEY: masterKey, SLUICE_DATA_DIR: dataDir },
        profDir: null,
        targetDb: DST,
        cpuGroups: MARIA_CPU,
        warm: WARM,
        ...(build === 'baseline' ? { dist: BASELINE } : CANDIDATE ? { dist: CANDIDATE } : {}),
      });
      checked(`Sluice (${build})`, await pgCheck(), expected);
      runs[build] = { wallRps: s.wallRps, cpu: s.workerCpuMs / 1000 };
    }
    const limitRps = (limitBefore + (await limit())) / 2;
    const line = order
      .map((b) => {
        const ratio = runs[b].wallRps / limitRps;
        seen[b].push({ ratio, cpu: runs[b].cpu });
        return `${b} ${ratio.toFixed(2)} (worker CPU ${runs[b].cpu.toFixed(2)} s)`;
      })
      .join(', ');
    console.log(`  A/B pair ${i + 1} (load ${atStart}): ratio to the limit ${line}`);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const b of ['baseline', 'this'])
    console.log(
      `  A/B ${b.padEnd(8)} mean ratio to the limit ${mean(seen[b].map((x) => x.ratio)).toFixed(2)}, ` +
        `mean worker CPU ${mean(seen[b].map((x) => x.cpu)).toFixed(2)} s (${b === 'baseline' ? BASELINE : CANDIDATE || 'this checkout'})`,
    );
}

async function main() {
  ensurePgloader();
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs; rows ${ROWS.join(', ')}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const db of [STORE, DST]) await createDatabase(db);
  my(`create database ${MYDB} character set utf8mb4 collate utf8mb4_unicode_ci`);
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
    await bench(p);
  } finally {
    await p?.close().catch(() => {});
    for (const db of [STORE, DST]) await dropDatabase(db).catch(() => {});
    try {
      my(`drop database if exists ${MYDB}`);
    } catch {}
    fs.rmSync(dataDir, { recursive: true, force: true });
    removeLimitFiles();
  }
  console.log(`\nload average after the runs: ${load()} (other work on the machine skews every figure)`);
  console.log(
    '| rows | Sluice rows/s (execute→finished) | mariadb \\| psql rows/s | ratio | pgloader rows/s | × pgloader | limit rows/s | ratio to limit | worker peak |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.rows.toLocaleString('en')} | ${r.sluice.toFixed(0)} | ${r.pipe.toFixed(0)} | ${(r.sluice / r.pipe).toFixed(2)} | ` +
        `${r.pgloader.toFixed(0)} | ${(r.sluice / r.pgloader).toFixed(2)} | ${r.limit.toFixed(0)} | ` +
        `${(r.sluice / r.limit).toFixed(2)} | ${r.rss.toFixed(0)} MB |`,
    );
  }
  for (const r of results) {
    const a = r.sluice / r.pipe;
    const b = r.sluice / r.pgloader;
    console.log(
      `targets at ${r.rows.toLocaleString('en')} rows: ≥ 0.8 of the pipe → ${a.toFixed(2)} ${a >= 0.8 ? 'met' : 'MISSED'}; ` +
        `≥ 2× pgloader → ${b.toFixed(2)}× ${b >= 2 ? 'met' : 'MISSED'}; ` +
        `≥ 0.8 of the limit (issue 26 item 8) → ${(r.sluice / r.limit).toFixed(2)} ${r.sluice / r.limit >= 0.8 ? 'met' : 'MISSED'}`,
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
