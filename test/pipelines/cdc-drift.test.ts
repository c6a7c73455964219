import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type PostgresCluster, startPostgresCluster } from '../peers/postgres-cluster';
import { waitUntil } from '../support/runs';
import {
  checkpoints,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  pgDataSource,
  runToEnd,
  scratchRuntime,
  stepOf,
} from './support';

// Schema changes seen by a cdc source become drift reports and follow the pipeline's contract
// (docs/cdc.md "Schema changes"): a column added between runs is reported and flows on; a
// contracted column retyped fails the run before anything is written, and a run after the fix
// continues from the same position.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_cdc_drift_${id}`;

describe('schema changes of a cdc source on PostgreSQL', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let cluster: PostgresCluster;
  let shopUrl: string;
  let sinkUrl: string;

  const query = async (url: string, text: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query(text)).rows;
    } finally {
      await c.end();
    }
  };
  const shop = (text: string) => query(shopUrl, text);
  const sink = (text: string) => query(sinkUrl, text);
  const reports = async () =>
    (await ok(s.call('GET', `${ORG}/data-sources/shop-db/drift-reports`), 200)).reports as any[];
  const sunk = async () => (await sink('SELECT id FROM order_changes ORDER BY seq')).map((r) => r.id);

  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: { wal_level: 'logical' } });
    shopUrl = await createDatabase(cluster.url, 'shop');
    sinkUrl = await createDatabase(cluster.url, 'sink');
    await shop('CREATE TABLE orders (id int PRIMARY KEY, qty int NOT NULL, note text)');
    await shop(`INSERT INTO orders VALUES (1, 1, 'a'), (2, 2, 'b')`);
    await sink(`CREATE TABLE order_changes (seq bigserial, _op text, _table text, _position text,
                  _committed_at timestamptz, _unchanged jsonb, id int, qty int, note text, vip boolean)`);
    s = await scratchRuntime(STORE_DB, { worker: true });
    await createDataSource(s.call, pgDataSource('shop-db', 'shop', cluster.port));
    await createDataSource(s.call, pgDataSource('warehouse', 'sink', cluster.port));
    await createProjectAndEnvironment(s.call);
    await ok(s.call('POST', `${ORG}/data-sources/shop-db/schema-import`), 202);
    await waitUntil(
      async () => (await s.call('GET', `${ORG}/data-sources/shop-db`)).json(),
      (x: any) => x.schema_status === 'ready',
    );
  }, 120_000);

  afterAll(async () => {
    await s?.close();
    await cluster?.destroy();
  });

  it('reports an added column and lets it flow; a retyped contracted column stops the run until fixed', async () => {
    await deployPipeline(s.call, {
      pipeline: 'orders-cdc',
      spec: {
        steps: [
          {
            slug: 'changes',
            kind: 'source',
            data_source_ref: 'shop',
            operation: { operation_type: 'cdc', tables: ['public.orders'] },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'order_changes', mode: 'insert' } },
          },
        ],
        edges: [{ from: 'changes', to: 'load' }],
      },
      bindings: { shop: 'shop-db', warehouse: 'warehouse' },
    });
    const run = async (state = 'succeeded') => {
      const r = await runToEnd(s.call, 'orders-cdc', {});
      expect(r.state, JSON.stringify(r.error)).toBe(state);
      return r;
    };
    await run();
    expect(await sunk()).toEqual([1, 2]);
    expect(await reports()).toEqual([]);

    // An added column: reported, and its values flow on.
    await shop('ALTER TABLE orders ADD COLUMN vip boolean');
    await shop(`INSERT INTO orders VALUES (3, 3, 'c', true)`);
    await run();
    expect(await sunk()).toEqual([1, 2, 3]);
    expect((await sink('SELECT vip FROM order_changes WHERE id = 3'))[0].vip).toBe(true);
    const [added] = await reports();
    expect(added).toMatchObject({ report_type: 'source_schema', status: 'open', data_source_slug: 'shop-db' });
    expect(added.changes).toEqual([expect.objectContaining({ kind: 'column_added', path: 'public.orders.vip' })]);
    // The same schema again writes nothing new.
    await run();
    expect((await reports()).length).toBe(1);

    // A contract on qty, then qty retyped: the run fails naming table, column and change.
    await ok(
      s.call('POST', `${ORG}/projects/shop/contracts`, {
        name: 'Orders out',
        slug: 'orders-out',
        target: { pipeline_slug: 'orders-cdc', step_slug: 'load' },
      }),
      201,
    );
    await ok(
      s.call('POST', `${ORG}/projects/shop/contracts/orders-out/revisions`, {
        columns: [{ name: 'qty', type: 'integer', nullable: false }],
      }),
      201,
    );
    await shop(`INSERT INTO orders VALUES (4, 4, 'd', false)`);
    await shop('ALTER TABLE orders ALTER COLUMN qty TYPE text');
    const before = (await checkpoints(s.call, 'orders-cdc'))[0].cursor;
    const failed = await run('failed');
    const step = stepOf(failed, 'changes');
    expect(step.error.code).toBe('CONTRACT_BROKEN');
    expect(step.error.message).toContain('public.orders.qty');
    expect(step.error.message).toContain('promised column qty is integer');
    expect(stepOf(failed, 'load').state).not.toBe('succeeded');
    expect(await sunk()).toEqual([1, 2, 3]);
    expect((await checkpoints(s.call, 'orders-cdc'))[0].cursor).toBe(before);
    const [retyped, superseded] = await reports();
    expect(retyped.severity).toBe('breaking');
    expect(retyped.changes).toContainEqual(
      expect.objectContaining({ kind: 'type_changed', path: 'public.orders.qty', before: 'integer', after: 'text' }),
    );
    expect(superseded.status).toBe('superseded');

    // Fixed at the source: the next run continues from the same position, nothing lost.
    await shop('ALTER TABLE orders ALTER COLUMN qty TYPE int USING qty::int');
    await run();
    expect(await sunk()).toEqual([1, 2, 3, 4]);
  }, 180_000);
});
