import { randomBytes } from 'node:crypto';
import type mysqlDriver from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cdcLagCheckJob } from '../../packages/server/src/jobs/cdc-lag-check';
import { type MariadbServer, startMariadbServer } from '../peers/mariadb-server';
import { runJobNow } from '../support/jobs';
import { pgQuery } from '../support/runs';
import {
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  PE,
  pgDataSource,
  runToEnd,
  scratchRuntime,
  stepOf,
} from './support';
import { asHash, MYSQL_ORDERS_ROW, mysqlHashSql, PG_ORDERS_ROW, pgHashSql } from './table-hash';

// The worked example the other way round (docs/cdc.md), through the API and a worker: a `cdc`
// source on a MariaDB of the suite's own (binlog on, ROW, FULL images) into a PostgreSQL `apply`
// sink, key `id`. After every run the PostgreSQL table equals the MariaDB one row for row, by a
// hash of each computed in SQL on its own server.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_cdcmy_${id}`;
const TARGET_DB = `sluice_cdcmy_t_${id}`;

describe('cdc from MySQL/MariaDB into a PostgreSQL apply sink', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let server: MariadbServer;
  let db: mysqlDriver.Connection;

  const src = async (text: string, values: unknown[] = []) => (await db.query(text, values))[0] as any[];
  const target = (text: string, values: unknown[] = []) => pgQuery(TARGET_DB, text, values);
  const sourceHash = async () => asHash((await src(mysqlHashSql('orders', MYSQL_ORDERS_ROW)))[0]);
  const targetHash = async () => asHash((await target(pgHashSql('orders', PG_ORDERS_ROW('placed_at'))))[0]);
  const run = async () => {
    const r = await runToEnd(s.call, 'orders-back', {}, 60_000);
    expect(r.state, JSON.stringify(r.error)).toBe('succeeded');
    return stepOf(r, 'orders-changes').rows_out as number;
  };

  beforeAll(async () => {
    server = await startMariadbServer();
    db = await server.connect();
    await src('CREATE DATABASE shop');
    await db.query('USE shop');
    await src(`CREATE TABLE orders (id INT PRIMARY KEY, customer VARCHAR(200) NOT NULL, amount DECIMAL(12, 2) NOT NULL,
                 status VARCHAR(20) NOT NULL, placed_at DATETIME(6) NOT NULL, note MEDIUMTEXT) CHARACTER SET utf8mb4`);
    await src('CREATE TABLE nokey (a INT)');
    await pgQuery('postgres', `drop database if exists ${TARGET_DB} with (force)`);
    await pgQuery('postgres', `create database ${TARGET_DB}`);
    await target(`CREATE TABLE orders (id integer PRIMARY KEY, customer text NOT NULL, amount numeric(12, 2) NOT NULL,
                    status text NOT NULL, placed_at timestamp(6) NOT NULL, note text)`);
    s = await scratchRuntime(STORE_DB, { worker: true, env: { SLUICE_CDC_LAG_ALERT_BYTES: '65536' } });
    await createDataSource(s.call, {
      type: 'mysql',
      name: 'shop-my',
      slug: 'shop-my',
      config: {
        host: '127.0.0.1',
        port: server.port,
        database: 'shop',
        user: 'root',
        allow_private_hosts: true,
      },
      credentials: { password: '' },
    });
    await createDataSource(s.call, pgDataSource('warehouse', TARGET_DB));
    await createProjectAndEnvironment(s.call);
  }, 180_000);

  afterAll(async () => {
    await s?.close();
    await db?.end();
    await server?.destroy();
    await pgQuery('postgres', `drop database if exists ${TARGET_DB} with (force)`);
  });

  const spec = (tables: string[]) => ({
    steps: [
      {
        slug: 'orders-changes',
        kind: 'source',
        data_source_ref: 'orders-db',
        operation: { operation_type: 'cdc', tables, snapshot: 'initial', max_changes: 1000 },
      },
      {
        slug: 'replica',
        kind: 'sink',
        data_source_ref: 'orders-replica',
        operation: { operation_type: 'sql', write: { table: 'orders', mode: 'apply', key: ['id'] } },
      },
    ],
    edges: [{ from: 'orders-changes', to: 'replica' }],
  });
  const bindings = { 'orders-db': 'shop-my', 'orders-replica': 'warehouse' };

  it('validation asks the MariaDB: a table without a key is named with its fix', async () => {
    const base = `${ORG}/projects/shop/pipelines`;
    await ok(s.call('POST', base, { name: 'checked', slug: 'checked' }), 201);
    const draft = spec(['shop.orders', 'shop.nokey']);
    await ok(s.call('POST', `${base}/checked/versions`, { spec: draft }), [200, 201]);
    for (const [ref, ds] of Object.entries(bindings))
      await ok(
        s.call('PUT', `${PE}/pipelines/checked/data-source-bindings/${ref}`, { data_source_slug: ds }),
        [200, 201],
      );
    const v = await ok(
      s.call('POST', `${PE}/pipeline-validation`, { pipeline_slug: 'checked', spec: draft }),
      [200, 201],
    );
    expect(v.valid).toBe(false);
    const noKey = v.findings.find((f: any) => f.code === 'CDC_TABLE_NO_KEY');
    expect(noKey, JSON.stringify(v.findings)).toMatchObject({ path: 'steps[0].operation.tables[1]' });
    expect(noKey.message).toContain('PRIMARY KEY');
  });

  it('snapshot, inserts, updates and deletes: the PostgreSQL table equals the MariaDB one after every run', async () => {
    await src(`INSERT INTO orders
      WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 200)
      SELECT n, CONCAT('customer ', n, IF(n % 7 = 0, ' Zoë', '')), ROUND(n * 1.37, 2), 'new',
             TIMESTAMP'2026-01-01 00:00:00.123456' + INTERVAL n HOUR + INTERVAL n MICROSECOND,
             CASE WHEN n % 10 = 0 THEN NULL WHEN n % 25 = 1 THEN REPEAT(MD5(n), 400) ELSE CONCAT('note ', n) END
        FROM g`);
    await deployPipeline(s.call, { pipeline: 'orders-back', spec: spec(['shop.orders']), bindings });

    expect(await run()).toBe(200);
    expect(await targetHash()).toEqual(await sourceHash());
    expect((await targetHash()).rows).toBe(200);

    await src(`INSERT INTO orders
      WITH RECURSIVE g(n) AS (SELECT 201 UNION ALL SELECT n + 1 FROM g WHERE n < 260)
      SELECT n, CONCAT('late ', n), n, 'new', NOW(6), NULL FROM g`);
    await src(`UPDATE orders SET status = 'shipped', amount = amount + 1 WHERE id % 3 = 0`);
    await src('DELETE FROM orders WHERE id % 11 = 0');
    expect(await run()).toBeGreaterThan(0);
    const afterSecond = await targetHash();
    expect(afterSecond).toEqual(await sourceHash());

    // A key deleted and inserted again, a row changed twice in one transaction, more deletes.
    await src(`INSERT INTO orders VALUES (11, 'again', 0.01, 'new', '2026-02-28 23:59:59.999999', 'back')`);
    await db.beginTransaction();
    await src(`UPDATE orders SET status = 'paid' WHERE id = 2`);
    await src(`UPDATE orders SET status = 'done', note = NULL WHERE id = 2`);
    await db.commit();
    await src('DELETE FROM orders WHERE id IN (1, 76)');
    expect(await run()).toBeGreaterThan(0);
    expect(await targetHash()).toEqual(await sourceHash());
    expect(await targetHash()).not.toEqual(afterSecond);
    expect(await run()).toBe(0);
    expect(await targetHash()).toEqual(await sourceHash());

    // The capture as the pipeline (and its app tab) shows it: the committed binlog position,
    // nothing behind the server's end; then a change not yet read puts it behind.
    const captures = async () =>
      (await ok(s.call('GET', `${ORG}/projects/shop/pipelines/orders-back/captures`), 200)).captures;
    const [now] = await captures();
    expect(now).toMatchObject({ step_slug: 'orders-changes', status: 'ok', lag_bytes: 0, active: false });
    const [master] = await src('SHOW MASTER STATUS');
    expect(now.confirmed_position).toBe(`${master.File}:${master.Position}`);
    await src(`UPDATE orders SET status = 'later' WHERE id = 3`);
    const [behind] = await captures();
    expect(behind.lag_bytes).toBeGreaterThan(0);
    expect(behind.confirmed_position).toBe(now.confirmed_position);
  }, 240_000);

  it('insert, truncate, insert: the PostgreSQL table holds only the last insert', async () => {
    await src(`INSERT INTO orders VALUES (1001, 'before', 1, 'new', NOW(6), NULL)`);
    await src('TRUNCATE TABLE orders');
    await src(`INSERT INTO orders VALUES (1002, 'after', 2, 'new', NOW(6), 'kept')`);
    // With the update the former case left unread.
    expect(await run()).toBe(4);
    expect(await targetHash()).toEqual(await sourceHash());
    expect((await target('SELECT id FROM orders')).map((r: any) => r.id)).toEqual([1002]);
    // Refill for the next case.
    await src(`INSERT INTO orders
      WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 100)
      SELECT n, CONCAT('customer ', n), n, 'new', NOW(6), NULL FROM g`);
  }, 120_000);

  it('lag and binlog retention alert and resolve on an injected clock; a purged binlog is critical', async () => {
    const captures = async () =>
      (await ok(s.call('GET', `${ORG}/projects/shop/pipelines/orders-back/captures`), 200)).captures;
    const notice = async (type: string) =>
      (await ok(s.call('GET', `${ORG}/notifications?notification_type=${type}`), 200)).notifications as any[];
    const check = async (at: Date) => {
      s.rt.deps.clock = () => at;
      try {
        await runJobNow(s.rt.deps, cdcLagCheckJob, {});
      } finally {
        s.rt.deps.clock = undefined;
      }
    };
    await src('SET GLOBAL binlog_expire_logs_seconds = 86400');
    expect(await run()).toBe(100);
    const [fresh] = await captures();
    // The committed position is in the binlog being written: it cannot be purged yet.
    expect(fresh).toMatchObject({ status: 'ok', lag_bytes: 0, retention_expires_at: null });
    const committedAt = new Date(fresh.last_checkpoint_at);

    // 128 KiB of binlog behind, in a binlog the server has since closed.
    await src(`UPDATE orders SET note = REPEAT('y', 2000) WHERE id <= 100`);
    await src('FLUSH BINARY LOGS');
    const [behind] = await captures();
    expect(behind.lag_bytes).toBeGreaterThan(65536);
    expect(behind.retention_expires_at).toBe(new Date(committedAt.getTime() + 86_400_000).toISOString());
    await check(new Date(committedAt.getTime() + 60_000));
    const [lagging] = await notice('cdc_capture_lagging');
    expect(lagging).toMatchObject({ lifecycle_state: 'open', severity: 'warning' });
    expect(lagging.title).toMatch(/retains 0\.\d MiB of log/);
    expect(lagging.summary).toContain('step orders-changes of pipeline orders-back in staging');
    expect(await notice('cdc_capture_inactive')).toEqual([]);

    // Thirteen hours on, less than half the day of retention is left: a retention warning, and
    // no run has committed for longer than the inactivity bound.
    await check(new Date(committedAt.getTime() + 13 * 3600_000));
    expect((await notice('cdc_capture_lagging'))[0].title).toMatch(/its binlog may be purged in 11\.0 h/);
    expect((await notice('cdc_capture_inactive'))[0].lifecycle_state).toBe('open');

    // A run catches up: both resolve.
    expect(await run()).toBe(100);
    expect(await targetHash()).toEqual(await sourceHash());
    await check(new Date());
    expect((await notice('cdc_capture_lagging'))[0].lifecycle_state).toBe('resolved');
    expect((await notice('cdc_capture_inactive'))[0].lifecycle_state).toBe('resolved');

    // The committed position's binlog purged: critical, and the capture shows it gone.
    await src(`UPDATE orders SET status = 'purged' WHERE id = 3`);
    await src('FLUSH BINARY LOGS');
    const [{ File: current }] = await src('SHOW MASTER STATUS');
    // MariaDB keeps a binlog until InnoDB's log has caught up with it (its binlog checkpoint).
    for (let i = 0; i < 100; i++) {
      await src(`PURGE BINARY LOGS TO '${current}'`);
      if ((await src('SHOW BINARY LOGS')).length === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const [gone] = await captures();
    expect(gone, JSON.stringify(gone)).toMatchObject({ status: 'ok', lag_bytes: null });
    // (Checked later than the thirteen hours above: a notification takes the newest occurrence's title.)
    await check(new Date(committedAt.getTime() + 14 * 3600_000));
    const [purged] = await notice('cdc_capture_lagging');
    expect(purged).toMatchObject({ lifecycle_state: 'open', severity: 'critical' });
    expect(purged.title).toContain('its binlog was purged');
  }, 180_000);
});
