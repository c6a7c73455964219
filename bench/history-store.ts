// bench:history's stores (history.bench.ts): a platform database set up through the API with its
// own worker, runs executed on it to the end, and a pipeline that fails when run.
import pg from 'pg';
import {
  createDatabase,
  dbUrl,
  deployPipeline,
  openPlatform,
  PE,
  type Platform,
  setUpTick,
} from './pipeline-support';
import { startWorker, type WorkerProcess } from './worker-process';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What every store of an invocation shares: its key, its data directory, its sink database. */
export type StoreOptions = { masterKey: string; dataDir: string; dst: string; pipelines: number };

export type Store = { name: string; p: Platform; worker: WorkerProcess; client: pg.Client; reused: boolean };

/** A new store set up through the API, or (`apiKey`) a kept one as it was left. */
export async function openStore(name: string, o: StoreOptions, apiKey?: string): Promise<Store> {
  if (!apiKey) await createDatabase(name);
  const p = await openPlatform(
    {
      DATABASE_URL: dbUrl(name),
      SLUICE_MASTER_KEY: o.masterKey,
      SLUICE_DATA_DIR: o.dataDir,
      SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
    },
    apiKey,
  );
  if (!apiKey) {
    await setUpTick(p, o.dst);
    for (let i = 1; i < o.pipelines; i++) {
      await p.call('POST', '/organizations/acme/projects/bench/pipelines', { name: `p${i}`, slug: `p${i}` });
    }
  }
  const worker = await startWorker({
    DATABASE_URL: dbUrl(name),
    SLUICE_MASTER_KEY: o.masterKey,
    SLUICE_DATA_DIR: o.dataDir,
  });
  const client = new pg.Client({ connectionString: dbUrl(name), application_name: 'sluice-bench' });
  await client.connect();
  return { name, p, worker, client, reused: !!apiKey };
}

/** Runs `tick` to the end; execute request → finished_at (store clock, same host). */
export async function executeOnce(
  s: Store,
  slug: string,
  pipeline = 'tick',
  state = 'succeeded',
): Promise<number> {
  const t0 = Date.now();
  await s.p.call('POST', `${PE}/pipelines/${pipeline}:execute`, { run_slug: slug });
  for (;;) {
    const { rows } = await s.client.query(
      // By (organization, slug), the unique index: a slug alone would scan every run.
      `select state, extract(epoch from finished_at) * 1000 as f from pipeline_runs
        where organization_id = (select id from organizations where slug = 'acme') and slug = $1`,
      [slug],
    );
    if (rows[0]?.f) {
      if (rows[0].state !== state) throw new Error(`${s.name} ${slug}: ${rows[0].state}`);
      return Number(rows[0].f) - t0;
    }
    await sleep(5);
  }
}

/** A pipeline whose source divides by zero on the rows `tick` wrote: it fails when run, not when validated. */
export async function deployBroken(s: Store) {
  await deployPipeline(s.p, 'broken', {
    steps: [
      {
        slug: 'one',
        kind: 'source',
        data_source_ref: 'target-db',
        operation: { operation_type: 'sql', sql: 'SELECT n FROM ticks WHERE 1 / (n - n) = 1' },
      },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'target-db',
        operation: { operation_type: 'sql', write: { table: 'ticks', mode: 'insert' } },
      },
    ],
    edges: [{ from: 'one', to: 'load' }],
  });
}
