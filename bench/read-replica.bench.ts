// `npm run bench:replica`: what a read replica takes off the store (docs/scaling.md, "Past one
// store"; docs/operations.md "Read replicas"). A PostgreSQL cluster of the bench's own and a
// streaming standby of it (pg_basebackup -R, as test/read-replica.test.ts starts them); the API in
// this process (app.inject, one request at a time) on the first, with DATABASE_READ_URL on the
// second. For each list path, BENCH_REQUESTS requests with the reads on the store (the baseline,
// DATABASE_READ_URL unset in effect), then as many with them on the standby, then on the store
// again: the CPU of every process of each cluster (postmaster and its children: backends, WAL
// sender and receiver, startup process, writers) and of this process, per request, and the
// median latency. Every page read from the standby is compared with the store's.
//
//   BENCH_REQUESTS=500            requests per path and phase
//   BENCH_REQUEST_RUNS=500        runs in the store
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkInterval } from '../packages/server/src/db/replica';
import { createDatabase as createDatabaseOn, startPostgresCluster } from '../test/peers/postgres-cluster';
import { createDatabase, dropDatabase, loadAverages, openPlatform, PE, setUpTick } from './pipeline-support';
import { clusterCpuMs } from './proc-cpu';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 500);
const RUNS = Number(process.env.BENCH_REQUEST_RUNS ?? 500);
const DST = `sluice_bench_replica_dst_${process.pid}`;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-replica-'));

const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs; ${REQUESTS} requests per path and phase, ${RUNS} runs; load average ${loadAverages()}`,
  );
  const primary = await startPostgresCluster();
  const storeUrl = await createDatabaseOn(primary.url, 'sluice');
  const standby = await startPostgresCluster({ standbyOf: primary });
  const readUrl = storeUrl.replace(`:${primary.port}/`, `:${standby.port}/`);
  await createDatabase(DST);
  const p = await openPlatform({
    DATABASE_URL: storeUrl,
    DATABASE_READ_URL: readUrl,
    SLUICE_MASTER_KEY: crypto.randomBytes(32).toString('base64'),
    SLUICE_DATA_DIR: dataDir,
    SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
  });
  const reads = p.rt.deps.reads;
  try {
    if (!reads) throw new Error('the platform opened no read replica');
    await setUpTick(p, DST);
    for (let i = 0; i < RUNS; i++)
      await p.call('POST', `${PE}/pipelines/tick:execute`, { run_slug: `r${i}` });
    const lines = `(select jsonb_agg(jsonb_build_array('tick', 'info', 'line ' || g, g) order by g) from generate_series(1, 200) g)`;
    await p.rt.deps.store.executeSql(
      `insert into pipeline_run_logs (run_id, seq, last_seq, at, lines)
       select r.id, 1, 200, now(), ${lines} from pipeline_runs r where r.slug = 'r7'`,
    );
    // Ended: a running run's log is read from the store (docs/operations.md "Read replicas").
    await p.rt.deps.store.executeSql(
      `update pipeline_runs set state = 'succeeded', started_at = now(), finished_at = now() where slug = 'r7'`,
    );
    for (let i = 0; i < 200 && !reads.state().usable; i++) await new Promise((r) => setTimeout(r, 50));
    if (!reads.state().usable) throw new Error(`the standby did not catch up: ${reads.state().reason}`);

    const paths: [string, string][] = [
      ['events list (20, first page)', '/organizations/acme/events?limit=20'],
      ['runs list (20 with steps)', `${PE}/runs?limit=20`],
      ['runs list, state=queued', `${PE}/runs?limit=20&state=queued`],
      ["an ended run's log tail (20 of 200)", `${PE}/runs/r7/logs?limit=20`],
    ];
    console.log(
      `\nper request: CPU of the store's cluster / the standby's cluster / this process (API), median latency\n` +
        `${'path'.padEnd(36)}${'reads on'.padEnd(10)}${'store'.padStart(10)}${'standby'.padStart(10)}${'API'.padStart(10)}${'p50'.padStart(10)}`,
    );
    const totals = { store: 0, replica: 0 };
    for (const [label, url] of paths) {
      const expected = JSON.stringify(await p.call('GET', url));
      const phase = async (where: 'store' | 'replica') => {
        p.rt.deps.reads = where === 'replica' ? reads : undefined;
        for (let i = 0; i < 30; i++) await p.call('GET', url); // warm-up: JIT, pools, plans
        const served = reads.state().served.replica;
        const s0 = clusterCpuMs(primary.dir);
        const r0 = clusterCpuMs(standby.dir);
        const o0 = ownCpuMs();
        const times: number[] = [];
        for (let i = 0; i < REQUESTS; i++) {
          const t = performance.now();
          const body = await p.call('GET', url);
          times.push(performance.now() - t);
          if (i === 0 && JSON.stringify(body) !== expected)
            throw new Error(`${label}: the ${where} answered another page`);
        }
        const per = {
          store: (clusterCpuMs(primary.dir) - s0) / REQUESTS,
          standby: (clusterCpuMs(standby.dir) - r0) / REQUESTS,
          api: (ownCpuMs() - o0) / REQUESTS,
          p50: median(times),
        };
        const fromReplica = reads.state().served.replica - served;
        if (where === 'replica' && fromReplica !== REQUESTS)
          throw new Error(`${label}: ${fromReplica} of ${REQUESTS} requests were read from the standby`);
        console.log(
          `${label.padEnd(36)}${where.padEnd(10)}${`${per.store.toFixed(3)} ms`.padStart(10)}${`${per.standby.toFixed(3)} ms`.padStart(10)}` +
            `${`${per.api.toFixed(3)} ms`.padStart(10)}${`${per.p50.toFixed(2)} ms`.padStart(10)}`,
        );
        return per;
      };
      const a = await phase('store');
      const b = await phase('replica');
      const c = await phase('store');
      const storeBase = (a.store + c.store) / 2;
      totals.store += storeBase;
      totals.replica += b.store;
      console.log(
        `${''.padEnd(36)}the store's CPU per request with the reads on the standby: ${(b.store / storeBase).toFixed(2)} of the baseline (mean of the two around it)`,
      );
    }
    console.log(
      `\nall four paths: the store's CPU per request ${(totals.replica / totals.store).toFixed(2)} of the baseline with the lists on the standby; ` +
        `freshness checks: one statement on each cluster every ${checkInterval(p.rt.deps.config.reads?.maxLagMs ?? 1000)} ms; load average ${loadAverages()}`,
    );
  } finally {
    await p.close().catch(() => {});
    await dropDatabase(DST).catch(() => {});
    await standby.destroy();
    await primary.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
