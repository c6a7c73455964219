// `BENCH_HISTORY_DB=<kept database> BENCH_AB_BASE=<another checkout> tsx bench/history-logs-ab.ts`:
// a run's log tail (the route's service call: project environment, run, last 20 lines) with
// another checkout's server code (A) and this one's (B), on a store `npm run bench:history` kept
// (`BENCH_HISTORY_KEEP=1`). Each request asks for a different seeded run drawn over all of them,
// so each reads pages no earlier request read (as the bench's log tail does), and A and B
// alternate which goes first. Not a test: it prints p50 / p90 / p99 / mean per side.
//
//   BENCH_AB_REQUESTS=1000   requests per side
//   BENCH_AB_SEED=1          which runs are drawn (another seed, other runs)
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openStore as openB } from '../packages/server/src/db/client';
import * as B from '../packages/server/src/modules/runs/runs.service';

const DB = process.env.BENCH_HISTORY_DB;
const BASE = process.env.BENCH_AB_BASE;
const N = Number(process.env.BENCH_AB_REQUESTS ?? 1000);
const SEED = Number(process.env.BENCH_AB_SEED ?? 1);
const RUNS = 10_000_000;
if (!DB || !BASE) throw new Error('BENCH_HISTORY_DB and BENCH_AB_BASE are required');
const url = `postgres://postgres@127.0.0.1:5432/${DB}`;
const from = (rel: string) => import(pathToFileURL(path.resolve(BASE, 'packages/server/src', rel)).href);

const pct = (v: number[], p: number) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
};

async function main() {
  const A = (await from('modules/runs/runs.service.ts')) as typeof B;
  const openA = (await from('db/client.ts')).openStore as typeof openB;
  const stores = { A: await openA({ databaseUrl: url } as any), B: await openB({ databaseUrl: url } as any) };
  const svc = { A, B };
  const { rows } = await stores.B.executeSql(`select id from organizations where slug = 'acme'`, []);
  const scope = { org: { id: rows[0].id } } as any;
  const pe = { project: 'bench', environment: 'bench' };
  const query = { limit: 20, sort_by: 'log_seq', order: 'desc', direction: 'next' } as const;
  const call = async (k: 'A' | 'B', slug: string) => {
    const t0 = performance.now();
    const page = await svc[k].listLogs({ deps: { db: stores[k].db } } as any, scope, pe, slug, query);
    const ms = performance.now() - t0;
    if (page.items.length !== 10) throw new Error(`${k} ${slug}: ${page.items.length} lines`);
    return ms;
  };
  // Plans and the small tables' pages first, on runs the measurement does not draw.
  for (let i = 1; i <= 20; i++) for (const k of ['A', 'B'] as const) await call(k, `h${i}`);
  const ms = { A: [] as number[], B: [] as number[] };
  for (let i = 0; i < N; i++) {
    for (const k of i % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const run = 1 + (((i * 2 + (k === 'A' ? 0 : 1)) * 7_919_993 + SEED * 104_729) % RUNS);
      ms[k].push(await call(k, `h${run}`));
    }
  }
  for (const k of ['A', 'B'] as const) {
    const v = ms[k];
    console.log(
      `${k} ${k === 'A' ? BASE : 'this checkout'}: p50 ${pct(v, 50).toFixed(2)} p90 ${pct(v, 90).toFixed(2)} ` +
        `p99 ${pct(v, 99).toFixed(2)} mean ${(v.reduce((a, b) => a + b, 0) / v.length).toFixed(2)} ms`,
    );
  }
  await stores.A.close();
  await stores.B.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
