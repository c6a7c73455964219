// `npm run bench:requests`: what one API request costs, for the capacity model of
// docs/scaling.md: statements sent to the platform database, its commits (pg_stat_database; an
// autocommitted read counts as one), CPU of the API process and of the PostgreSQL backends
// serving it (/proc), and the response's bytes. Not a test: it prints figures.
//
// The API runs in this process (requests through app.inject, one at a time) on a scratch
// PostgreSQL platform database holding BENCH_REQUEST_RUNS runs (executed, not run: no worker)
// and their events. Baseline in the same invocation: the events list, the path bench:api
// measures against its same-work ceiling (docs/benchmarks.md), first and again last (the load of
// other processes drifts; CPU per request moves with it).
//
//   BENCH_REQUESTS=300            requests per path
//   BENCH_REQUEST_RUNS=200        runs in the store
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import './statement-counter.mjs';
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
import { runCost } from './run-cost';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const RUNS = Number(process.env.BENCH_REQUEST_RUNS ?? 200);
const STORE = `sluice_bench_req_store_${process.pid}`;
const DST = `sluice_bench_req_dst_${process.pid}`;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-requests-'));
const statsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-requests-stats-'));
const load = loadAverages;

async function main() {
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs; ${REQUESTS} requests per path, ${RUNS} runs; load average ${load()}`,
  );
  for (const db of [STORE, DST]) await createDatabase(db);
  const cost = runCost({ statsDir, platformDb: STORE, dataDb: DST });
  const p = await openPlatform({
    DATABASE_URL: dbUrl(STORE),
    SLUICE_MASTER_KEY: crypto.randomBytes(32).toString('base64'),
    SLUICE_DATA_DIR: dataDir,
    SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
  });
  try {
    await setUpTick(p, DST);
    for (let i = 0; i < RUNS; i++)
      await p.call('POST', `${PE}/pipelines/tick:execute`, { run_slug: `r${i}` });
    // r7's log: 200 lines in one batch, as a worker writes them (docs/operations.md#run-logs).
    await sql(
      STORE,
      `insert into pipeline_run_logs (run_id, seq, last_seq, at, lines)
       select r.id, 1, 200, now(),
              (select jsonb_agg(jsonb_build_array('tick', 'info', 'line ' || g, g) order by g)
                 from generate_series(1, 200) g)
         from pipeline_runs r where r.slug = 'r7'`,
    );
    const paths: [string, string][] = [
      ['events list (20, first page)', '/organizations/acme/events?limit=20'],
      ['runs list (20 with steps)', `${PE}/runs?limit=20`],
      ['runs list, state=queued', `${PE}/runs?limit=20&state=queued`],
      ['a run', `${PE}/runs/r7`],
      ["a run's log tail (20 of 200 lines)", `${PE}/runs/r7/logs?limit=20`],
      ['events list again (drift check)', '/organizations/acme/events?limit=20'],
    ];
    console.log('path                              statements  commits  API CPU   store CPU   bytes');
    for (const [label, url] of paths) {
      for (let i = 0; i < 30; i++) await p.call('GET', url); // warm-up: JIT, pool, plans
      const bytes = JSON.stringify(await p.call('GET', url)).length;
      const before = await cost.counters([]);
      for (let i = 0; i < REQUESTS; i++) await p.call('GET', url);
      const per = await cost.perRun(before, [], REQUESTS);
      console.log(
        `${label.padEnd(34)}${per.platformStatements.toFixed(2).padStart(10)}${per.platformCommits.toFixed(2).padStart(9)}` +
          `${`${per.ownCpuMs.toFixed(2)} ms`.padStart(10)}${`${per.storeCpuMs.toFixed(2)} ms`.padStart(12)}${String(bytes).padStart(8)}`,
      );
    }
    console.log(`load average ${load()}`);
    const runs = Number((await sql(STORE, 'select count(*) as n from pipeline_runs'))[0].n);
    if (runs !== RUNS) throw new Error(`the store holds ${runs} runs, expected ${RUNS}`);
  } finally {
    cost.stop();
    await p.close().catch(() => {});
    for (const db of [STORE, DST]) await dropDatabase(db).catch(() => {});
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
