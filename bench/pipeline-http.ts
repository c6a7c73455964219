// bench:pipeline's HTTP JSON → DuckDB → PostgreSQL case (issue 26 item 6; pipeline.bench.ts runs
// it): a local JSON API's records through a DuckDB transform into PostgreSQL, against `psql
// \copy` of the same rows as a CSV file. Every load's table is compared with the baseline's, row
// by row; with `warm`, a second run in a worker that ran it before; with `baseline`, A/B pairs of
// another compiled build's workers against this one's.
import fs from 'node:fs';
import path from 'node:path';
import { startJsonServer, writePeopleCsv } from './people-source';
import {
  count,
  dbUrl,
  deployPipeline,
  type Platform,
  pgDataSource,
  resetTarget,
  shell,
  sql,
} from './pipeline-support';
import type { runInWorker } from './worker-process';

const PEOPLE = `id bigint primary key, name text, email text, amount double precision,
  created_at timestamptz, active boolean, country text`;

export type HttpCase = {
  p: Platform;
  /** Records in the one response. */
  n: number;
  /** The target database (its data source is `target-db`). */
  dst: string;
  dataDir: string;
  /** Create the `target-db` data source (the PostgreSQL case did not run). */
  createTarget: boolean;
  warm: boolean;
  /** Another compiled build's directory for A/B pairs, or ''. */
  baseline: string;
  abPairs: number;
  load: () => string;
  /** One run in a fresh worker (pipeline.bench.ts `sluiceRun`, its platform given). */
  run: RunInFreshWorker;
};

/** A run of `pipeline` in a fresh worker, `target` (database, table) counted after it. */
export type RunInFreshWorker = (
  pipeline: string,
  n: number,
  target: [string, string],
  tag: string,
  warm?: () => Promise<void>,
  dist?: string,
) => ReturnType<typeof runInWorker>;

export type HttpResult = { rps: number; baseline: number; peakMB: number };

export async function httpToPg(c: HttpCase): Promise<HttpResult> {
  const { p, n, dst: DST, dataDir, load, run: sluiceRun } = c;
  console.log(
    `\nHTTP JSON → DuckDB transform → PostgreSQL, ${n.toLocaleString('en')} records (load average ${load()})`,
  );
  const server = await startJsonServer(n);
  const csv = path.join(dataDir, 'people.csv');
  try {
    // The PostgreSQL case creates the target data source; when it did not run, this one does.
    if (c.createTarget)
      await p.call('POST', '/organizations/acme/data-sources', pgDataSource('target-db', DST));
    await p.call('POST', '/organizations/acme/data-sources', {
      type: 'http',
      name: 'people-api',
      slug: 'people-api',
      config: { base_url: server.url, allow_private_hosts: true },
      credentials: {},
    });
    await deployPipeline(p, 'http-to-pg', {
      steps: [
        {
          slug: 'people',
          kind: 'source',
          data_source_ref: 'people-api',
          operation: { operation_type: 'http', method: 'GET', path: '/people' },
          response: { records_path: 'data' },
        },
        {
          slug: 'clean',
          kind: 'transform',
          operation: {
            operation_type: 'sql',
            sql: 'SELECT id, name, lower(email) AS email, amount, created_at, active, country FROM people',
          },
        },
        {
          slug: 'load',
          kind: 'sink',
          data_source_ref: 'target-db',
          operation: { operation_type: 'sql', write: { table: 'people', mode: 'insert' } },
        },
      ],
      edges: [
        { from: 'people', to: 'clean' },
        { from: 'clean', to: 'load' },
      ],
    });
    await writePeopleCsv(csv, n);
    const copyCsv = async () => {
      await resetTarget(DST, 'people', PEOPLE);
      const ms = await shell(`psql -X -q "${dbUrl(DST)}" -c "\\copy people FROM '${csv}' WITH (FORMAT csv)"`);
      if ((await count(DST, 'people')) !== n) throw new Error('\\copy baseline loaded a different row count');
      const rps = n / (ms / 1000);
      console.log(
        `  psql \\copy from CSV         ${rps.toFixed(0).padStart(8)} rows/s  (${(ms / 1000).toFixed(1)} s)`,
      );
      return rps;
    };
    // Every row, not only their number: the table's text after the run must be the baseline's.
    const fingerprint = async () =>
      (await sql(DST, `select md5(string_agg(t::text, '|' order by id)) as h from people t`))[0].h as string;
    const before = await copyCsv();
    const expected = await fingerprint();
    await resetTarget(DST, 'people', PEOPLE);
    const s = await sluiceRun('http-to-pg', n, [DST, 'people'], `http-to-pg-${n}`);
    if ((await fingerprint()) !== expected) throw new Error('the run loaded different rows than \\copy');
    console.log('  rows checked: the loaded table is the same as the one \\copy loads');
    const after = await copyCsv();
    const baseline = (before + after) / 2;
    const ratio = s.wallRps / baseline;
    console.log(
      `  ratio to \\copy (mean of before/after): execute→finished ${ratio.toFixed(2)}, ` +
        `run clock ${(s.rps / baseline).toFixed(2)} — target ≥ 0.8 (issue 26): ${ratio >= 0.8 ? 'met' : 'MISSED'}`,
    );
    if (c.warm) {
      await resetTarget(DST, 'people', PEOPLE);
      const w = await sluiceRun('http-to-pg', n, [DST, 'people'], `http-to-pg-warm-${n}`, () =>
        resetTarget(DST, 'people', PEOPLE),
      );
      if ((await fingerprint()) !== expected)
        throw new Error('the warm run loaded different rows than \\copy');
      const last = await copyCsv();
      const warmBaseline = (after + last) / 2;
      console.log(
        `  in a worker that ran it before (DuckDB loaded): ratio ${(w.wallRps / warmBaseline).toFixed(2)} ` +
          `(execute→finished, against the mean of the \\copy runs around it)`,
      );
    }
    if (c.baseline) {
      // Pairs of the other build's workers and this one's, the order alternating, each a fresh
      // worker and one that ran the pipeline before; every load checked against \copy's table.
      const seen: Record<string, { fresh: number[]; warm: number[]; freshCpu: number[]; cpu: number[] }> = {
        baseline: { fresh: [], warm: [], freshCpu: [], cpu: [] },
        this: { fresh: [], warm: [], freshCpu: [], cpu: [] },
      };
      for (let i = 0; i < c.abPairs; i++) {
        const order = i % 2 === 0 ? ['baseline', 'this'] : ['this', 'baseline'];
        console.log(`  A/B pair ${i + 1} (${order.join(' first, ')}; load average ${load()})`);
        const copyBefore = await copyCsv();
        const got: Record<string, { fresh: number; warm: number; freshCpu: number; cpu: number }> = {};
        for (const build of order) {
          const dist = build === 'baseline' ? c.baseline : undefined;
          await resetTarget(DST, 'people', PEOPLE);
          const f = await sluiceRun('http-to-pg', n, [DST, 'people'], `ab-${build}-${i}`, undefined, dist);
          if ((await fingerprint()) !== expected) throw new Error(`the ${build} run loaded different rows`);
          await resetTarget(DST, 'people', PEOPLE);
          const w = await sluiceRun(
            'http-to-pg',
            n,
            [DST, 'people'],
            `ab-${build}-warm-${i}`,
            () => resetTarget(DST, 'people', PEOPLE),
            dist,
          );
          if ((await fingerprint()) !== expected)
            throw new Error(`the ${build} warm run loaded different rows`);
          got[build] = {
            fresh: f.wallRps,
            warm: w.wallRps,
            freshCpu: f.workerCpuMs / 1000,
            cpu: w.workerCpuMs / 1000,
          };
        }
        const copyRps = (copyBefore + (await copyCsv())) / 2;
        for (const b of order) {
          seen[b].fresh.push(got[b].fresh / copyRps);
          seen[b].warm.push(got[b].warm / copyRps);
          seen[b].freshCpu.push(got[b].freshCpu);
          seen[b].cpu.push(got[b].cpu);
        }
        console.log(
          `  pair ${i + 1}: ` +
            order
              .map(
                (b) =>
                  `${b} fresh ${(got[b].fresh / copyRps).toFixed(2)}, warm ${(got[b].warm / copyRps).toFixed(2)} ` +
                  `(worker CPU fresh ${got[b].freshCpu.toFixed(2)} s, warm ${got[b].cpu.toFixed(2)} s)`,
              )
              .join('; '),
        );
      }
      const mean = (xs: number[]) => (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2);
      for (const b of ['baseline', 'this'])
        console.log(
          `  A/B ${b}: ratio to \\copy fresh ${seen[b].fresh.map((x) => x.toFixed(2)).join(' / ')} (mean ${mean(seen[b].fresh)}), ` +
            `warm ${seen[b].warm.map((x) => x.toFixed(2)).join(' / ')} (mean ${mean(seen[b].warm)}); ` +
            `worker CPU mean fresh ${mean(seen[b].freshCpu)} s, warm ${mean(seen[b].cpu)} s`,
        );
    }
    return { rps: s.wallRps, baseline, peakMB: s.peakMB };
  } finally {
    await server.close();
    fs.rmSync(csv, { force: true });
  }
}
