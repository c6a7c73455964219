import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PagesApiPeer, pageRecord, startPagesApi } from '../peers/pages-api';
import { createDatabase, type PostgresCluster, startPostgresCluster } from '../peers/postgres-cluster';
import { waitUntil } from '../support/runs';
import {
  checkpoints,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  execute,
  finished,
  getRun,
  httpDataSource,
  pgDataSource,
  runToEnd,
  scratchRuntime,
  stepOf,
} from './support';

// The sink's PostgreSQL server restarts while a run is writing into it: the run fails with an
// error that says what happened, the target holds nothing of it (one transaction per run), the
// cursor stays, and the next run loads everything. The sink is a throwaway cluster we can stop;
// the platform store is a scratch database on the shared server.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_sr_${id}`;
const RECORDS = 3000;

describe('sink database restarted mid-run', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let cluster: PostgresCluster;
  let sinkUrl: string;
  let api: PagesApiPeer;

  const sinkQuery = async (text: string) => {
    const c = new pg.Client({ connectionString: sinkUrl });
    await c.connect();
    try {
      return (await c.query(text)).rows;
    } finally {
      await c.end();
    }
  };
  const sinkCount = async () => Number((await sinkQuery('select count(*) as n from orders'))[0].n);

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    sinkUrl = await createDatabase(cluster.url, 'sink');
    await sinkQuery(
      'create table orders (id bigint primary key, name text not null, qty int, price numeric(10,2), region text)',
    );
    api = await startPagesApi({ pageSize: RECORDS });
    api.records.push(...Array.from({ length: RECORDS }, (_, i) => pageRecord(i + 1)));
    // Run retries off: this suite is about the attempt the restart fails (a retryable
    // CONNECTION_FAILED would otherwise be tried again: test/runs/run-retry.api.test.ts).
    s = await scratchRuntime(STORE_DB, {
      worker: true,
      env: { SLUICE_RUN_LEASE_SECONDS: '5', SLUICE_RUN_RETRY_ATTEMPTS: '0' },
    });
    await createDataSource(s.call, httpDataSource('shop-api', api.url));
    await createDataSource(s.call, pgDataSource('warehouse', 'sink', cluster.port));
    await createProjectAndEnvironment(s.call);
    await deployPipeline(s.call, {
      pipeline: 'orders-sync',
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'shop-api',
            operation: {
              operation_type: 'http',
              path: '/orders',
              query_params: { after: '{{runtime.incremental.lower_bound.cursor}}' },
            },
            response: { records_path: 'data', cursor_path: 'next_cursor' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'orders', mode: 'upsert', key: ['id'] } },
          },
        ],
        edges: [{ from: 'orders', to: 'load' }],
      },
      bindings: { 'shop-api': 'shop-api', warehouse: 'warehouse' },
    });
  }, 120_000);

  afterAll(async () => {
    await s?.close();
    await api?.close();
    await cluster?.destroy();
  });

  it('fails the run with a clear error, keeps nothing of it, and the next run succeeds', async () => {
    // 3,000 records at ~2 ms each: the sink's transaction is open for several seconds.
    api.set({ delayMs: 2 });
    await execute(s.call, 'orders-sync', { run_slug: 'interrupted' });
    // A first batch of 1,000 is in the sink's (uncommitted) staging table...
    await waitUntil(
      () => getRun(s.call, 'interrupted'),
      (r) => (stepOf(r, 'load')?.rows_in ?? 0) >= 1000 || !['queued', 'running'].includes(r.state),
      30_000,
    ).then((r) => expect(r.state, JSON.stringify(r)).toBe('running'));
    const open = await sinkQuery(
      `select count(*)::int as n from pg_stat_activity where datname = 'sink' and application_name = 'sluice' and xact_start is not null`,
    );
    expect(open[0].n).toBe(1);
    // ... when the server restarts.
    await cluster.stop('fast');
    await new Promise((r) => setTimeout(r, 1000));
    await cluster.start();

    const run = await finished(s.call, 'interrupted', 60_000);
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'failed', attempt: 1 });
    expect(run.error.code).toBe('STEP_FAILED');
    expect(run.error.message).toContain('load');
    const load = stepOf(run, 'load');
    expect(load.state).toBe('failed');
    expect(load.error).toEqual({
      code: 'CONNECTION_FAILED',
      message: `127.0.0.1:${cluster.port} closed the connection unexpectedly`,
    });
    expect(await sinkCount()).toBe(0);
    expect(await checkpoints(s.call, 'orders-sync')).toEqual([]);

    api.set({ delayMs: 0 });
    const next = await runToEnd(s.call, 'orders-sync', { run_slug: 'after-restart' });
    expect(next, JSON.stringify(next)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(next, 'load').rows_out).toBe(RECORDS);
    expect(await sinkCount()).toBe(RECORDS);
    expect((await sinkQuery('select sum(id)::text as s from orders'))[0].s).toBe(
      String((RECORDS * (RECORDS + 1)) / 2),
    );
    expect(await checkpoints(s.call, 'orders-sync')).toMatchObject([
      { step_slug: 'orders', cursor: String(RECORDS), run_slug: 'after-restart' },
    ]);
  }, 120_000);
});
