import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MariadbServer, startMariadbServer } from '../peers/mariadb-server';
import { createDatabase, type PostgresCluster, startPostgresCluster } from '../peers/postgres-cluster';
import { waitUntil } from '../support/runs';
import {
  checkpoints,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  execute,
  finished,
  mysqlDataSource,
  ORG,
  ok,
  pgDataSource,
  runToEnd,
  scratchRuntime,
  stepOf,
} from './support';

// Schema changes seen by a cdc source (PostgreSQL, and MariaDB started by the suite) become drift reports and follow the pipeline's contract
// (docs/cdc.md "Schema changes"): a column added between runs is reported and flows on; a
// contracted column retyped fails the run before anything is written, and a run after the fix
// continues from the same position.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_cdc_drift_${id}`;

describe('schema changes of a cdc source', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let cluster: PostgresCluster;
  let maria: MariadbServer;
  let mariaDb: Awaited<ReturnType<MariadbServer['connect']>>;
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
  const maria_ = async (text: string) => {
    await mariaDb.query(text);
  };
  const reports = async (ds = 'shop-db') =>
    (await ok(s.call('GET', `${ORG}/data-sources/${ds}/drift-reports`), 200)).reports as any[];
  const sunk = async (table = 'order_changes') =>
    (await sink(`SELECT id FROM ${table} ORDER BY seq`)).map((r) => r.id);
  const importSchema = async (ds: string) => {
    await ok(s.call('POST', `${ORG}/data-sources/${ds}/schema-import`), 202);
    await waitUntil(
      async () => (await s.call('GET', `${ORG}/data-sources/${ds}`)).json(),
      (x: any) => x.schema_status === 'ready',
    );
  };
  const cdcSpec = (tables: string[], source: string, target: string) => ({
    steps: [
      {
        slug: 'changes',
        kind: 'source',
        data_source_ref: source,
        operation: { operation_type: 'cdc', tables },
      },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'warehouse',
        operation: { operation_type: 'sql', write: { table: target, mode: 'insert' } },
      },
    ],
    edges: [{ from: 'changes', to: 'load' }],
  });
  const contractOnQty = async (pipeline: string) => {
    await ok(
      s.call('POST', `${ORG}/projects/shop/contracts`, {
        name: `${pipeline} out`,
        slug: `${pipeline}-out`,
        target: { pipeline_slug: pipeline, step_slug: 'load' },
      }),
      201,
    );
    await ok(
      s.call('POST', `${ORG}/projects/shop/contracts/${pipeline}-out/revisions`, {
        columns: [{ name: 'qty', type: 'integer', nullable: false }],
      }),
      201,
    );
  };
  const runOf =
    (pipeline: string) =>
    async (state = 'succeeded') => {
      const r = await runToEnd(s.call, pipeline, {});
      expect(r.state, JSON.stringify(r.error)).toBe(state);
      return r;
    };

  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: { wal_level: 'logical' } });
    shopUrl = await createDatabase(cluster.url, 'shop');
    sinkUrl = await createDatabase(cluster.url, 'sink');
    await shop('CREATE TABLE orders (id int PRIMARY KEY, qty int NOT NULL, note text)');
    await shop(`INSERT INTO orders VALUES (1, 1, 'a'), (2, 2, 'b')`);
    await sink(`CREATE TABLE order_changes (seq bigserial, _op text, _table text, _position text,
                  _committed_at timestamptz, _unchanged jsonb, id int, qty int, note text, vip boolean)`);
    await sink(`CREATE TABLE maria_changes (seq bigserial, _op text, _table text, _position text,
                  _committed_at timestamptz, _unchanged jsonb, id int, qty int, note text, vip int)`);
    maria = await startMariadbServer();
    mariaDb = await maria.connect();
    await maria_('CREATE DATABASE shop CHARACTER SET utf8mb4');
    await maria_('CREATE TABLE shop.orders (id int PRIMARY KEY, qty int NOT NULL, note text)');
    await maria_(`INSERT INTO shop.orders VALUES (1, 1, 'a'), (2, 2, 'b')`);
    s = await scratchRuntime(STORE_DB, { worker: true });
    const m = mysqlDataSource('maria-db', 'shop');
    await createDataSource(s.call, { ...m, config: { ...m.config, port: maria.port } });
    await createDataSource(s.call, pgDataSource('shop-db', 'shop', cluster.port));
    await createDataSource(s.call, pgDataSource('warehouse', 'sink', cluster.port));
    await createProjectAndEnvironment(s.call);
    await importSchema('shop-db');
    await importSchema('maria-db');
  }, 120_000);

  afterAll(async () => {
    await s?.close();
    await mariaDb?.end();
    await maria?.destroy();
    await cluster?.destroy();
  });

  it('reports an added column and lets it flow; a retyped contracted column stops the run until fixed', async () => {
    await deployPipeline(s.call, {
      pipeline: 'orders-cdc',
      spec: cdcSpec(['public.orders'], 'shop', 'order_changes'),
      bindings: { shop: 'shop-db', warehouse: 'warehouse' },
    });
    const run = runOf('orders-cdc');
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
    expect(added).toMatchObject({
      report_type: 'source_schema',
      status: 'open',
      data_source_slug: 'shop-db',
    });
    expect(added.changes).toEqual([
      expect.objectContaining({ kind: 'column_added', path: 'public.orders.vip' }),
    ]);
    // The same schema again writes nothing new.
    await run();
    expect((await reports()).length).toBe(1);

    // A contract on qty, then qty retyped: the run fails naming table, column and change.
    await contractOnQty('orders-cdc');
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
      expect.objectContaining({
        kind: 'type_changed',
        path: 'public.orders.qty',
        before: 'integer',
        after: 'text',
      }),
    );
    expect(superseded.status).toBe('superseded');
    // An import that stores the retype does not let the run through.
    await importSchema('shop-db');
    const again = stepOf(await run('failed'), 'changes');
    expect(again.error.code).toBe('CONTRACT_BROKEN');
    expect(await sunk()).toEqual([1, 2, 3]);

    // Fixed at the source: the next run continues from the same position, nothing lost.
    await shop('ALTER TABLE orders ALTER COLUMN qty TYPE int USING qty::int');
    await run();
    expect(await sunk()).toEqual([1, 2, 3, 4]);
  }, 180_000);

  it('on MariaDB: an added column is reported and flows; a retyped contracted column stops the run until fixed', async () => {
    await deployPipeline(s.call, {
      pipeline: 'maria-cdc',
      spec: cdcSpec(['shop.orders'], 'maria', 'maria_changes'),
      bindings: { maria: 'maria-db', warehouse: 'warehouse' },
    });
    const run = runOf('maria-cdc');
    const sunkM = () => sunk('maria_changes');
    await run();
    expect(await sunkM()).toEqual([1, 2]);
    expect(await reports('maria-db')).toEqual([]);

    await maria_('ALTER TABLE shop.orders ADD COLUMN vip tinyint');
    await maria_(`INSERT INTO shop.orders VALUES (3, 3, 'c', 1)`);
    await run();
    expect(await sunkM()).toEqual([1, 2, 3]);
    expect((await sink('SELECT vip FROM maria_changes WHERE id = 3'))[0].vip).toBe(1);
    const [added] = await reports('maria-db');
    expect(added.changes).toEqual([
      expect.objectContaining({ kind: 'column_added', path: 'shop.orders.vip' }),
    ]);

    await contractOnQty('maria-cdc');
    await maria_(`INSERT INTO shop.orders VALUES (4, 4, 'd', 0)`);
    await maria_('ALTER TABLE shop.orders MODIFY qty varchar(10) NOT NULL');
    const before = (await checkpoints(s.call, 'maria-cdc'))[0].cursor;
    const failed = await run('failed');
    const step = stepOf(failed, 'changes');
    expect(step.error.code).toBe('CONTRACT_BROKEN');
    expect(step.error.message).toContain('shop.orders.qty');
    expect(await sunkM()).toEqual([1, 2, 3]);
    expect((await checkpoints(s.call, 'maria-cdc'))[0].cursor).toBe(before);
    expect((await reports('maria-db'))[0].changes).toContainEqual(
      expect.objectContaining({ kind: 'type_changed', path: 'shop.orders.qty' }),
    );

    await maria_('ALTER TABLE shop.orders MODIFY qty int NOT NULL');
    await run();
    expect(await sunkM()).toEqual([1, 2, 3, 4]);
  }, 180_000);

  it('on MariaDB: a new version capturing one more table copies that table once, then follows both', async () => {
    await maria_('CREATE TABLE shop.more_orders (id int PRIMARY KEY, qty int NOT NULL, note text)');
    await maria_(`INSERT INTO shop.more_orders VALUES (1001, 10, 'm1'), (1002, 20, 'm2')`);
    await maria_(`INSERT INTO shop.orders VALUES (700, 7, 'pending', 0)`);
    const [{ n: last }] = await sink('SELECT coalesce(max(seq), 0) AS n FROM maria_changes');
    await deployPipeline(s.call, {
      pipeline: 'maria-cdc',
      spec: cdcSpec(['shop.orders', 'shop.more_orders'], 'maria', 'maria_changes'),
      bindings: { maria: 'maria-db', warehouse: 'warehouse' },
      create: false,
    });
    const run = runOf('maria-cdc');
    await run();
    await maria_('UPDATE shop.more_orders SET qty = 11 WHERE id = 1001');
    await run();
    const rows = await sink(
      `SELECT _op, _table, id, qty FROM maria_changes WHERE seq > ${Number(last)} ORDER BY seq`,
    );
    expect(rows).toEqual([
      { _op: 'insert', _table: 'shop.more_orders', id: 1001, qty: 10 },
      { _op: 'insert', _table: 'shop.more_orders', id: 1002, qty: 20 },
      { _op: 'insert', _table: 'shop.orders', id: 700, qty: 7 },
      { _op: 'update', _table: 'shop.more_orders', id: 1001, qty: 11 },
    ]);
  }, 120_000);

  it('a contracted column retyped while a run reads fails that run before the sink commits, the position unmoved', async () => {
    await shop('CREATE TABLE items (id int PRIMARY KEY, qty int NOT NULL)');
    await shop('INSERT INTO items VALUES (1, 1)');
    await sink(`CREATE TABLE item_changes (seq bigserial, _op text, _table text, _position text,
                  _committed_at timestamptz, _unchanged jsonb, id int, qty int, note text)`);
    await importSchema('shop-db');
    await deployPipeline(s.call, {
      pipeline: 'items-cdc',
      spec: cdcSpec(['public.items'], 'shop', 'item_changes'),
      bindings: { shop: 'shop-db', warehouse: 'warehouse' },
    });
    await contractOnQty('items-cdc');
    const run = runOf('items-cdc');
    // A column added since the import: each run's start reports it, under the data source's lock.
    await shop('ALTER TABLE items ADD COLUMN note text');
    await run();
    expect(await sunk('item_changes')).toEqual([1]);
    await shop('INSERT INTO items VALUES (2, 2)');
    const before = (await checkpoints(s.call, 'items-cdc'))[0].cursor;

    // The next run is held at its start (the data source's row locked in the store), after it
    // described the tables; meanwhile qty is retyped and a row written. The run then reads a
    // change whose table has the new shape: reported then, the contract breaks, nothing commits.
    const store = new pg.Client({ connectionString: s.env.DATABASE_URL });
    await store.connect();
    await store.query('BEGIN');
    await store.query(`SELECT 1 FROM data_sources WHERE slug = 'shop-db' FOR UPDATE`);
    let slug = '';
    try {
      slug = (await execute(s.call, 'items-cdc')).slug;
      await waitUntil(
        async () =>
          Number(
            (
              await s.sql(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
              )
            )[0].n,
          ),
        (n) => n > 0,
        30_000,
      );
      await shop('ALTER TABLE items ALTER COLUMN qty TYPE text');
      await shop(`INSERT INTO items VALUES (3, '3')`);
    } finally {
      await store.query('ROLLBACK');
      await store.end();
    }
    const failed = await finished(s.call, slug, 60_000);
    expect(failed.state).toBe('failed');
    const step = stepOf(failed, 'changes');
    expect(step.error.code).toBe('CONTRACT_BROKEN');
    expect(step.error.message).toContain('promised column qty is integer');
    expect(stepOf(failed, 'load').state).not.toBe('succeeded');
    expect(await sunk('item_changes')).toEqual([1]);
    expect((await checkpoints(s.call, 'items-cdc'))[0].cursor).toBe(before);
    // The newest report covers the table (type_changed on its own; cumulative against an older
    // open report's baseline that lacks the table, table_added).
    const [newest] = await reports();
    expect(
      newest.changes.some((c: any) => String(c.path).startsWith('public.items')),
      JSON.stringify(newest.changes),
    ).toBe(true);

    // Fixed at the source: the next run reads from the same position, nothing lost.
    await shop('ALTER TABLE items ALTER COLUMN qty TYPE int USING qty::int');
    await run();
    expect(await sunk('item_changes')).toEqual([1, 2, 3]);
  }, 180_000);
});
