import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type PostgresCluster, startPostgresCluster } from '../peers/postgres-cluster';
import { type CliProcess, startCli } from '../support/cli';
import { waitUntil } from '../support/runs';
import {
  checkpoints,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  execute,
  finished,
  ORG,
  ok,
  PE,
  pgDataSource,
  scratchRuntime,
  stepOf,
} from './support';

// A cdc source on PostgreSQL through the API and `sluice worker` processes (docs/cdc.md): the
// source is a throwaway cluster with wal_level=logical; the sink appends the change rows to a
// changelog table (mode insert) whose last row per key, folded, must equal the source table.
// A worker is SIGKILLed after its sink committed but before the run ended (the test holds the
// run's row, as test/runs/sink-exactly-once.test.ts does): the retry hands on the same changes
// and position, the sink's ledger skips them, and nothing is lost or doubled.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_cdc_${id}`;

describe('cdc from PostgreSQL through a pipeline', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let cluster: PostgresCluster;
  let shopUrl: string;
  let sinkUrl: string;
  const children: CliProcess[] = [];

  const query = async (url: string, text: string, values: unknown[] = []) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query(text, values)).rows;
    } finally {
      await c.end();
    }
  };
  const shop = (text: string, values: unknown[] = []) => query(shopUrl, text, values);
  const sink = (text: string, values: unknown[] = []) => query(sinkUrl, text, values);

  /** The source table and the changelog folded to each key's last state, as one text each. */
  const sourceText = async () =>
    (
      await shop(
        `SELECT coalesce(string_agg(id || ':' || qty || ':' || coalesce(note, '~'), ',' ORDER BY id), '') AS t FROM orders`,
      )
    )[0].t;
  const foldedText = async () =>
    (
      await sink(`SELECT coalesce(string_agg(id || ':' || qty || ':' || coalesce(note, '~'), ',' ORDER BY id), '') AS t
                    FROM (SELECT DISTINCT ON (id) * FROM order_changes ORDER BY id, seq DESC) last
                   WHERE _op <> 'delete'`)
    )[0].t;
  const doubled = async () =>
    Number(
      (
        await sink(
          `SELECT count(*) AS n FROM (SELECT 1 FROM order_changes GROUP BY _position, id, _op HAVING count(*) > 1) d`,
        )
      )[0].n,
    );

  async function worker() {
    const p = startCli(['worker'], { env: { ...s.env, SLUICE_RUN_LEASE_SECONDS: '2' } });
    children.push(p);
    await p.waitForStdout(/Sluice worker is running/, 60_000);
    return p;
  }
  const runState = async (slug: string) =>
    (await s.sql('select state, attempt from pipeline_runs where slug = $1', [slug]))[0] as
      | { state: string; attempt: number }
      | undefined;

  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: { wal_level: 'logical' } });
    shopUrl = await createDatabase(cluster.url, 'shop');
    sinkUrl = await createDatabase(cluster.url, 'sink');
    await shop('CREATE TABLE orders (id int PRIMARY KEY, qty int NOT NULL, note text)');
    await shop('CREATE TABLE nokey (a int)');
    await shop(`INSERT INTO orders SELECT g, g, 'n' || g FROM generate_series(1, 250) g`);
    await sink(`CREATE TABLE order_changes (seq bigserial, _op text, _table text, _position text,
                  _committed_at timestamptz, _unchanged jsonb, id int, qty int, note text)`);
    s = await scratchRuntime(STORE_DB);
    await createDataSource(s.call, pgDataSource('shop-db', 'shop', cluster.port));
    await createDataSource(s.call, pgDataSource('warehouse', 'sink', cluster.port));
    await createProjectAndEnvironment(s.call);
  }, 120_000);

  afterAll(async () => {
    for (const c of children)
      if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await s?.close();
    await cluster?.destroy();
  });

  const spec = (tables: string[], sinkOp: Record<string, unknown> = {}) => ({
    steps: [
      {
        slug: 'changes',
        kind: 'source',
        data_source_ref: 'shop',
        operation: { operation_type: 'cdc', tables, max_changes: 100 },
      },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'warehouse',
        operation: { operation_type: 'sql', write: { table: 'order_changes', mode: 'insert' }, ...sinkOp },
      },
    ],
    edges: [{ from: 'changes', to: 'load' }],
  });

  it('validation names a table without a key and its fix, and refuses cdc on a sink', async () => {
    const base = `${ORG}/projects/shop/pipelines`;
    await ok(s.call('POST', base, { name: 'checked', slug: 'checked' }), 201);
    const draft = spec(['public.orders', 'public.nokey']);
    (draft.steps[1].operation as any) = { operation_type: 'cdc', tables: ['public.orders'] };
    await ok(s.call('POST', `${base}/checked/versions`, { spec: draft }), [200, 201]);
    await ok(
      s.call('PUT', `${PE}/pipelines/checked/data-source-bindings/shop`, { data_source_slug: 'shop-db' }),
      [200, 201],
    );
    await ok(
      s.call('PUT', `${PE}/pipelines/checked/data-source-bindings/warehouse`, {
        data_source_slug: 'warehouse',
      }),
      [200, 201],
    );
    const v = await ok(
      s.call('POST', `${PE}/pipeline-validation`, { pipeline_slug: 'checked', spec: draft }),
      [200, 201],
    );
    expect(v.valid).toBe(false);
    const codes = v.findings.map((f: any) => [f.code, f.path]);
    expect(codes).toContainEqual(['CDC_TABLE_NO_KEY', 'steps[0].operation.tables[1]']);
    expect(codes).toContainEqual(['CDC_ONLY_IN_SOURCE', 'steps[1].operation.operation_type']);
    const noKey = v.findings.find((f: any) => f.code === 'CDC_TABLE_NO_KEY');
    expect(noKey.message).toContain('REPLICA IDENTITY FULL');
  });

  it('snapshot and changes reach the target exactly, and a worker killed after the sink commit loses and doubles nothing', async () => {
    await deployPipeline(s.call, {
      pipeline: 'orders-cdc',
      spec: spec(['public.orders']),
      bindings: { shop: 'shop-db', warehouse: 'warehouse' },
    });
    let w = await worker();
    const run = async () => {
      const r = await finished(s.call, (await execute(s.call, 'orders-cdc')).slug, 60_000);
      expect(r.state, JSON.stringify(r.error)).toBe('succeeded');
      return r;
    };
    // 250 rows, 100 per run: the snapshot takes three runs.
    const sizes = [];
    for (let i = 0; i < 3; i++) sizes.push(stepOf(await run(), 'changes').rows_out);
    expect(sizes).toEqual([100, 100, 50]);
    expect(await foldedText()).toBe(await sourceText());

    await shop(`UPDATE orders SET qty = qty * 10 WHERE id % 3 = 0`);
    await shop(`DELETE FROM orders WHERE id % 5 = 0`);
    await shop(`INSERT INTO orders SELECT g, g, NULL FROM generate_series(251, 270) g`);
    // 83 + 50 + 20 changes in three transactions: two runs.
    while (stepOf(await run(), 'changes').rows_out > 0);
    expect(await foldedText()).toBe(await sourceText());

    // The kill: the run's row is held so the worker commits its sink but cannot end the run.
    // 24 changes (ids up to 30 but the deleted multiples of 5).
    await shop(`UPDATE orders SET note = 'after-kill' WHERE id <= 30`);
    // The target table locked, the run waits at its sink until the run's row is held too.
    const before = Number((await sink('select count(*) as n from order_changes'))[0].n);
    const lock = new pg.Client({ connectionString: sinkUrl });
    await lock.connect();
    await lock.query('begin');
    await lock.query('lock table order_changes in access exclusive mode');
    const slug = (await execute(s.call, 'orders-cdc')).slug;
    await waitUntil(
      () => runState(slug),
      (r) => r?.state === 'running',
    );
    const hold = new pg.Client({ connectionString: s.env.DATABASE_URL });
    await hold.connect();
    await hold.query('begin');
    await hold.query('select 1 from pipeline_runs where slug = $1 for no key update', [slug]);
    await lock.query('rollback');
    await lock.end();
    try {
      await waitUntil(
        async () => Number((await sink('select count(*) as n from order_changes'))[0].n),
        (n) => n >= before + 24,
        30_000,
      );
      w.child.kill('SIGKILL');
      await w.exited;
    } finally {
      await hold.query('rollback');
      await hold.end();
    }
    // More changes before the retry: they belong to the next run, not to the repeated one.
    await shop(`INSERT INTO orders VALUES (500, 5, 'late')`);
    w = await worker();
    const retried = await finished(s.call, slug, 60_000);
    expect(retried).toMatchObject({ state: 'succeeded', attempt: 2 });
    expect(Number((await sink('select count(*) as n from order_changes'))[0].n)).toBe(before + 24);
    const cursor = JSON.parse((await checkpoints(s.call, 'orders-cdc'))[0].cursor!);
    expect(cursor.snapshot).toBeNull();
    while (stepOf(await run(), 'changes').rows_out > 0);
    expect(await doubled()).toBe(0);
    expect(await foldedText()).toBe(await sourceText());
    expect(await foldedText()).toContain('500:5:late');
  }, 240_000);

  it('a truncate reaches a changelog sink as a truncate row, in order between the inserts', async () => {
    const [{ n: last }] = await sink('SELECT coalesce(max(seq), 0) AS n FROM order_changes');
    await shop(`INSERT INTO orders VALUES (600, 6, 'before')`);
    await shop('TRUNCATE orders');
    await shop(`INSERT INTO orders VALUES (601, 7, 'after')`);
    for (;;) {
      const r = await finished(s.call, (await execute(s.call, 'orders-cdc')).slug, 60_000);
      expect(r.state, JSON.stringify(r.error)).toBe('succeeded');
      if (stepOf(r, 'changes').rows_out === 0) break;
    }
    const rows = await sink(
      'SELECT _op, _table, id, qty, note, _position IS NOT NULL AS positioned FROM order_changes WHERE seq > $1 ORDER BY seq',
      [last],
    );
    expect(rows).toEqual([
      { _op: 'insert', _table: 'public.orders', id: 600, qty: 6, note: 'before', positioned: true },
      { _op: 'truncate', _table: 'public.orders', id: null, qty: null, note: null, positioned: true },
      { _op: 'insert', _table: 'public.orders', id: 601, qty: 7, note: 'after', positioned: true },
    ]);
  }, 120_000);

  it('a new version capturing one more table copies that table once, then follows both; the position is kept', async () => {
    await shop('CREATE TABLE more_orders (id int PRIMARY KEY, qty int NOT NULL, note text)');
    await shop(`INSERT INTO more_orders VALUES (1001, 10, 'm1'), (1002, 20, 'm2')`);
    const [{ n: last }] = await sink('SELECT coalesce(max(seq), 0) AS n FROM order_changes');
    await shop(`INSERT INTO orders VALUES (700, 7, 'pending')`);
    await deployPipeline(s.call, {
      pipeline: 'orders-cdc',
      spec: spec(['public.orders', 'public.more_orders']),
      bindings: { shop: 'shop-db', warehouse: 'warehouse' },
      create: false,
    });
    const runAll = async () => {
      for (;;) {
        const r = await finished(s.call, (await execute(s.call, 'orders-cdc')).slug, 60_000);
        expect(r.state, JSON.stringify(r.error)).toBe('succeeded');
        if (stepOf(r, 'changes').rows_out === 0) return;
      }
    };
    await runAll();
    await shop(`UPDATE more_orders SET qty = 11 WHERE id = 1001`);
    await runAll();
    const rows = await sink('SELECT _op, _table, id, qty FROM order_changes WHERE seq > $1 ORDER BY seq', [
      last,
    ]);
    expect(rows).toEqual([
      { _op: 'insert', _table: 'public.more_orders', id: 1001, qty: 10 },
      { _op: 'insert', _table: 'public.more_orders', id: 1002, qty: 20 },
      { _op: 'insert', _table: 'public.orders', id: 700, qty: 7 },
      { _op: 'update', _table: 'public.more_orders', id: 1001, qty: 11 },
    ]);
    const cursor = JSON.parse((await checkpoints(s.call, 'orders-cdc'))[0].cursor!);
    expect(cursor.tables).toEqual(['public.orders', 'public.more_orders']);
  }, 120_000);
});
