import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PagesApiPeer, pageRecord, startPagesApi } from '../peers/pages-api';
import { startTestApp, type TestApp } from '../support/app';
import { createSinkDatabase, dumpStore, pgQuery, waitUntil } from '../support/runs';
import {
  type Call,
  checkpoints,
  createDataSource,
  createMysqlDatabase,
  createProjectAndEnvironment,
  deployPipeline,
  execute,
  finished,
  getRun,
  httpDataSource,
  mysqlDataSource,
  ORG,
  ok,
  PE,
  pgDataSource,
  runToEnd,
  stepOf,
} from './support';

// Issue 4 acceptance over the API with the in-process worker: an HTTP JSON source paged across
// runs by its cursor, shaped by a DuckDB transform and upserted into PostgreSQL and MySQL; CSV
// over HTTP into PostgreSQL; sinks that reject a batch; a cancel through a transform and two
// sinks; and an input value and a secret (sent as a header) that are kept nowhere.
// (A cancel of an HTTP → PostgreSQL run and a failing source are in runs.execution.api.test.ts.)

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_e2e_pg_${id}`;
const MY_DB = `sluice_e2e_my_${id}`;
const SECRET = `SecretToken${randomBytes(12).toString('hex')}`;
const INPUT = `CanaryInput${randomBytes(12).toString('hex')}`;

const syncSpec = {
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
      slug: 'shape',
      kind: 'transform',
      operation: {
        operation_type: 'sql',
        sql: 'SELECT id, upper(name) AS name, qty, price, round(qty * price, 2) AS total, region FROM orders',
      },
    },
    {
      slug: 'to-pg',
      kind: 'sink',
      data_source_ref: 'warehouse',
      operation: { operation_type: 'sql', write: { table: 'orders', mode: 'upsert', key: ['id'] } },
    },
    {
      slug: 'to-mysql',
      kind: 'sink',
      data_source_ref: 'mart',
      operation: { operation_type: 'sql', write: { table: 'orders', mode: 'upsert', key: ['id'] } },
    },
  ],
  edges: [
    { from: 'orders', to: 'shape' },
    { from: 'shape', to: 'to-pg' },
    { from: 'shape', to: 'to-mysql' },
  ],
};

/** What the transform makes of record `id`, as both targets read it back. */
const shaped = (id: number) => {
  const r = pageRecord(id);
  return {
    id,
    name: r.name.toUpperCase(),
    qty: r.qty,
    price: r.price.toFixed(2),
    total: (Math.round(r.qty * r.price * 100) / 100).toFixed(2),
    region: r.region,
  };
};
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('pipelines end to end', () => {
  let t: TestApp;
  let api: PagesApiPeer;
  let token: string;
  let pgSink: { drop(): Promise<unknown> };
  let my: Awaited<ReturnType<typeof createMysqlDatabase>>;
  const call: Call = (method, url, body) => t.call(method, url, { token, body });

  const pgOrders = async () =>
    (
      await pgQuery(
        PG_DB,
        'select id::int as id, name, qty, price::text as price, total::text as total, region from orders order by id',
      )
    ).map((r) => ({ ...r }));
  const myOrders = async () =>
    (
      await my.query(
        'SELECT CAST(id AS SIGNED) AS id, name, qty, CAST(price AS CHAR) AS price, CAST(total AS CHAR) AS total, region FROM orders ORDER BY id',
      )
    ).map((r) => ({ ...r, id: Number(r.id), qty: Number(r.qty) }));

  beforeAll(async () => {
    pgSink = await createSinkDatabase(PG_DB);
    await pgQuery(PG_DB, 'drop table orders');
    await pgQuery(
      PG_DB,
      `create table orders (id bigint primary key, name text not null, qty int, price numeric(10,2),
         total numeric(12,2), region text);
       create table csv_orders (id bigint primary key, name text not null, qty int, price numeric(10,2), region text);
       create table strict_orders (id bigint primary key, name text not null, qty int, price numeric(10,2), region text);
       create table canary_orders (id bigint primary key, name text, qty int, price numeric(10,2), region text)`,
    );
    my = await createMysqlDatabase(MY_DB);
    await my.query(
      `CREATE TABLE orders (id BIGINT PRIMARY KEY, name VARCHAR(100) NOT NULL, qty INT,
         price DECIMAL(10,2), total DECIMAL(12,2), region VARCHAR(20)) ENGINE=InnoDB`,
    );
    await my.query(
      `CREATE TABLE strict_orders (id BIGINT PRIMARY KEY, name VARCHAR(100) NOT NULL, qty INT,
         price DECIMAL(10,2), region VARCHAR(20)) ENGINE=InnoDB`,
    );
    api = await startPagesApi({ pageSize: 4 });
    api.records.push(...range(1, 12).map(pageRecord));
    t = await startTestApp({ worker: true, env: { SLUICE_RUN_LEASE_SECONDS: '3' } });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, httpDataSource('shop-api', api.url));
    await createDataSource(call, pgDataSource('warehouse', PG_DB));
    await createDataSource(call, mysqlDataSource('mart', MY_DB));
    await createProjectAndEnvironment(call);
    await ok(
      call('PUT', `${ORG}/environments/staging/secrets/SHOP_TOKEN`, {
        value: SECRET,
        description: 'shop API token',
      }),
      201,
    );
    await deployPipeline(call, {
      pipeline: 'orders-sync',
      spec: syncSpec,
      bindings: { 'shop-api': 'shop-api', warehouse: 'warehouse', mart: 'mart' },
    });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await api?.close();
    await pgSink?.drop();
    await my?.drop();
  });

  it('pages an HTTP source across three runs into PostgreSQL and MySQL; a fourth run without new data changes nothing', async () => {
    const runs: string[] = [];
    for (const n of [1, 2, 3]) {
      const run = await runToEnd(call, 'orders-sync', { run_slug: `sync-${n}` });
      expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', attempt: 1, error: null });
      expect(run.steps.map((s: any) => [s.step_slug, s.state])).toEqual([
        ['orders', 'succeeded'],
        ['shape', 'succeeded'],
        ['to-pg', 'succeeded'],
        ['to-mysql', 'succeeded'],
      ]);
      expect(stepOf(run, 'orders').rows_out).toBe(4);
      expect(stepOf(run, 'shape')).toMatchObject({ rows_in: 4, rows_out: 4 });
      expect(stepOf(run, 'to-pg')).toMatchObject({ rows_in: 4, rows_out: 4 });
      expect(stepOf(run, 'to-mysql')).toMatchObject({ rows_in: 4, rows_out: 4 });
      runs.push(run.slug);
      // The cursor moved with the committed run: the next page follows.
      expect(await checkpoints(call, 'orders-sync')).toEqual([
        { step_slug: 'orders', cursor: String(4 * n), run_slug: `sync-${n}`, updated_at: expect.any(String) },
      ]);
    }
    // Each run asked for the page after the last committed cursor (none the first time).
    expect(api.requests.filter((r) => r.path === '/orders').map((r) => r.query.after ?? null)).toEqual([
      null,
      '4',
      '8',
    ]);
    const expected = range(1, 12).map(shaped);
    expect(await pgOrders()).toEqual(expected);
    expect(await myOrders()).toEqual(expected);

    // No new data: the API answers an empty page without a next cursor.
    const fourth = await runToEnd(call, 'orders-sync', { run_slug: 'sync-4' });
    expect(fourth, JSON.stringify(fourth)).toMatchObject({ state: 'succeeded', error: null });
    expect(api.requests.at(-1)?.query.after).toBe('12');
    expect(await pgOrders()).toEqual(expected);
    expect(await myOrders()).toEqual(expected);
    expect((await checkpoints(call, 'orders-sync'))[0]).toMatchObject({ cursor: '12' });
  });

  it('loads CSV over HTTP into PostgreSQL', async () => {
    await deployPipeline(call, {
      pipeline: 'orders-csv',
      spec: {
        steps: [
          {
            slug: 'export',
            kind: 'source',
            data_source_ref: 'shop-api',
            operation: { operation_type: 'http', path: '/orders.csv' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'csv_orders', mode: 'insert' } },
          },
        ],
        edges: [{ from: 'export', to: 'load' }],
      },
      bindings: { 'shop-api': 'shop-api', warehouse: 'warehouse' },
    });
    // A name with a comma and quotes has to survive the CSV round trip.
    api.records[0] = { ...api.records[0], name: 'order 1, "the first"' };
    try {
      const run = await runToEnd(call, 'orders-csv', { run_slug: 'csv-1' });
      expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', error: null });
      expect(stepOf(run, 'load')).toMatchObject({ state: 'succeeded', rows_out: 12 });
      expect(stepOf(run, 'export').bytes_out).toBeGreaterThan(200);
      const rows = await pgQuery(
        PG_DB,
        'select id::int as id, name, qty, price::text as price, region from csv_orders order by id',
      );
      expect(rows).toEqual(
        api.records.map((r) => ({
          id: r.id,
          name: r.name,
          qty: r.qty,
          price: r.price.toFixed(2),
          region: r.region,
        })),
      );
      // Not incremental: no cursor.
      expect(await checkpoints(call, 'orders-csv')).toEqual([]);
    } finally {
      api.records[0] = pageRecord(1);
    }
  });

  it('fails a run whose sinks reject a batch: targets and cursor unchanged, and the next run reads from there', async () => {
    const strictSpec = {
      steps: [
        { ...syncSpec.steps[0], slug: 'orders' },
        {
          slug: 'to-pg',
          kind: 'sink',
          data_source_ref: 'warehouse',
          operation: { operation_type: 'sql', write: { table: 'strict_orders', mode: 'insert' } },
        },
        {
          slug: 'to-mysql',
          kind: 'sink',
          data_source_ref: 'mart',
          operation: { operation_type: 'sql', write: { table: 'strict_orders', mode: 'insert' } },
        },
      ],
      edges: [
        { from: 'orders', to: 'to-pg' },
        { from: 'orders', to: 'to-mysql' },
      ],
    };
    await deployPipeline(call, {
      pipeline: 'strict-load',
      spec: strictSpec,
      bindings: { 'shop-api': 'shop-api', warehouse: 'warehouse', mart: 'mart' },
    });
    const loaded = async () => ({
      pg: (await pgQuery(PG_DB, 'select id::int as id, name from strict_orders order by id')).map((r) => ({
        ...r,
      })),
      my: (await my.query('SELECT CAST(id AS SIGNED) AS id, name FROM strict_orders ORDER BY id')).map(
        (r) => ({
          id: Number(r.id),
          name: r.name,
        }),
      ),
    });

    const first = await runToEnd(call, 'strict-load', { run_slug: 'strict-1' });
    expect(first.state, JSON.stringify(first)).toBe('succeeded');
    expect((await checkpoints(call, 'strict-load'))[0]).toMatchObject({ cursor: '4', run_slug: 'strict-1' });

    // The next page is 3,000 records; id 2500 already exists in both targets, so MySQL rejects
    // its third batch of inserts (after two went in) and PostgreSQL its merge.
    api.records.push(...range(13, 3004).map(pageRecord));
    api.set({ pageSize: 3000 });
    await pgQuery(PG_DB, `insert into strict_orders (id, name) values (2500, 'already here')`);
    await my.query(`INSERT INTO strict_orders (id, name) VALUES (2500, 'already here')`);
    const before = await loaded();
    expect(before.pg).toHaveLength(5);
    expect(before.my).toEqual(before.pg);
    try {
      const run = await runToEnd(call, 'strict-load', { run_slug: 'strict-2' });
      expect(run.state, JSON.stringify(run)).toBe('failed');
      expect(run.error.code).toBe('STEP_FAILED');
      const failed = run.steps.filter((s: any) => s.state === 'failed');
      expect(failed.length).toBeGreaterThan(0);
      for (const s of failed) {
        expect(['to-pg', 'to-mysql']).toContain(s.step_slug);
        expect(s.error.message).toMatch(/duplicate/i);
        // The rejected value is not quoted back.
        expect(s.error.message).not.toContain('2500');
      }
      expect(run.error.message).toMatch(/to-pg|to-mysql/);
      expect(await loaded()).toEqual(before);
      expect((await checkpoints(call, 'strict-load'))[0]).toMatchObject({
        cursor: '4',
        run_slug: 'strict-1',
      });

      // Without the conflicting rows the same page loads in full, from the kept cursor.
      await pgQuery(PG_DB, 'delete from strict_orders where id = 2500');
      await my.query('DELETE FROM strict_orders WHERE id = 2500');
      const again = await runToEnd(call, 'strict-load', { run_slug: 'strict-3' });
      expect(again, JSON.stringify(again)).toMatchObject({ state: 'succeeded' });
      expect(
        api.requests
          .filter((r) => r.path === '/orders')
          .slice(-2)
          .map((r) => r.query.after),
      ).toEqual(['4', '4']);
      const after = await loaded();
      expect(after.pg.map((r) => r.id)).toEqual(range(1, 3004));
      expect(after.my).toEqual(after.pg);
      expect((await checkpoints(call, 'strict-load'))[0]).toMatchObject({
        cursor: '3004',
        run_slug: 'strict-3',
      });
    } finally {
      api.set({ pageSize: 4 });
    }
  });

  it('cancels a run mid-stream through a transform and two sinks: canceled within seconds, nothing committed', async () => {
    // orders-sync's next page (after 12) streams slowly: 3,000 records at 20 ms each.
    api.set({ pageSize: 3000, delayMs: 20 });
    const pgBefore = await pgOrders();
    const myBefore = await myOrders();
    try {
      const since = Date.now();
      await execute(call, 'orders-sync', { run_slug: 'sync-slow' });
      const request = await api.waitForRequest((r) => r.path === '/orders' && r.at >= since);
      expect(request.query.after).toBe('12');
      await waitUntil(
        () => getRun(call, 'sync-slow'),
        (r) => r.state === 'running',
      );
      await new Promise((r) => setTimeout(r, 500));
      const cancel = await call('POST', `${PE}/runs/sync-slow:cancel`);
      expect(cancel.statusCode, cancel.body).toBe(202);
      const asked = Date.now();
      const run = await finished(call, 'sync-slow', 20_000);
      const took = Date.now() - asked;
      expect(run, JSON.stringify(run)).toMatchObject({ state: 'canceled', error: null });
      expect(took).toBeLessThan(8_000);
      expect(run.steps.every((s: any) => ['canceled', 'skipped'].includes(s.state))).toBe(true);
      expect(request.completed).toBe(false);
      expect(await pgOrders()).toEqual(pgBefore);
      expect(await myOrders()).toEqual(myBefore);
      expect((await checkpoints(call, 'orders-sync'))[0]).toMatchObject({ cursor: '12' });
    } finally {
      api.set({ pageSize: 4, delayMs: 0 });
    }
  });

  it('keeps an input value and a secret used in a header out of every record, log and dump', async () => {
    await deployPipeline(call, {
      pipeline: 'canary-sync',
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'shop-api',
            operation: {
              operation_type: 'http',
              path: '/orders',
              headers: { 'x-api-token': '{{runtime.secrets.SHOP_TOKEN}}' },
              query_params: {
                after: '{{runtime.incremental.lower_bound.cursor}}',
                region: '{{runtime.input.region}}',
              },
            },
            response: { records_path: 'data', cursor_path: 'next_cursor' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: {
              operation_type: 'sql',
              write: { table: 'canary_orders', mode: 'upsert', key: ['id'] },
            },
          },
        ],
        edges: [{ from: 'orders', to: 'load' }],
        inputs: { region: { required: true } },
      },
      bindings: { 'shop-api': 'shop-api', warehouse: 'warehouse' },
    });
    // The API refuses any request without the token.
    api.set({ token: SECRET });
    let run: any;
    try {
      run = await runToEnd(call, 'canary-sync', { run_slug: 'canary-1', input: { region: INPUT } });
    } finally {
      api.set({ token: null });
    }
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', input_keys: ['region'] });
    expect(stepOf(run, 'load').rows_out).toBe(4);
    // Both reached the API: that is what they are for.
    const seen = api.requests.filter((r) => r.query.region === INPUT);
    expect(seen).toHaveLength(1);
    expect(seen[0].headers['x-api-token']).toBe(SECRET);

    const runId = (await t.rt.deps.store.executeSql(`select id from pipeline_runs where slug = 'canary-1'`))
      .rows[0].id;
    expect(
      (await t.rt.deps.store.executeSql('select 1 from pipeline_run_inputs where run_id = $1', [runId])).rows,
    ).toHaveLength(0);

    const pages = async (url: string, key: string) => {
      const all: unknown[] = [];
      let cursor: string | null = null;
      do {
        const sep = url.includes('?') ? '&' : '?';
        const page: any = await ok(
          call('GET', `${url}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
          200,
        );
        all.push(...page[key]);
        cursor = page.has_more ? page.next_cursor : null;
      } while (cursor);
      return all;
    };
    const logs = await pages(`${PE}/runs/canary-1/logs`, 'logs');
    expect(logs.length).toBeGreaterThan(1);
    const texts = {
      run: JSON.stringify(await getRun(call, 'canary-1')),
      runList: JSON.stringify(await pages(`${PE}/runs`, 'runs')),
      logs: JSON.stringify(logs),
      events: JSON.stringify(await pages(`${ORG}/events`, 'events')),
      steps: JSON.stringify(
        (await t.rt.deps.store.executeSql('select * from pipeline_run_steps where run_id = $1', [runId]))
          .rows,
      ),
      store: await dumpStore((q) => t.rt.deps.store.executeSql(q)),
      processLog: t.logs(),
    };
    for (const [where, text] of Object.entries(texts)) {
      expect(text.includes(INPUT), `input value in ${where}`).toBe(false);
      expect(text.includes(SECRET), `secret in ${where}`).toBe(false);
    }
    // The dump did see the run (so the search was over the right rows).
    expect(texts.store).toContain('canary-1');
  });
});
