import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type PostgresCluster, startPostgresCluster } from '../peers/postgres-cluster';
import { type CliProcess, repoRoot, runCli, startCli } from '../support/cli';
import { waitUntil } from '../support/runs';
import { createMysqlDatabase, scratchRuntime } from './support';
import { asHash, MYSQL_ORDERS_ROW, mysqlHashSql, PG_ORDERS_ROW, pgHashSql } from './table-hash';

// The worked example of docs/cdc.md, exactly as a user runs it: examples/cdc-orders applied
// with `sluice apply`, run with `sluice pipelines execute --wait` against `sluice serve` (API and
// worker), the capture listed with `sluice cdc slots` and released by `sluice pipelines
// undeploy`. Source: a PostgreSQL cluster of the test's own with wal_level=logical; target: a
// scratch database on the system MariaDB. After every run the target equals the source row for
// row, by a hash of each table computed in SQL on its own server.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_cdcex_${id}`;
const REPLICA_DB = `cdcex_${id}`;
const example = path.join(repoRoot, 'examples/cdc-orders');
const where = ['--project', 'orders', '--env', 'dev'];

describe('docs/cdc.md worked example: PostgreSQL orders to a MySQL replica through the CLI', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let cluster: PostgresCluster;
  let shopUrl: string;
  let replica: Awaited<ReturnType<typeof createMysqlDatabase>>;
  let serve: CliProcess;
  let env: Record<string, string>;

  const shop = async (text: string, values: unknown[] = []) => {
    const c = new pg.Client({ connectionString: shopUrl });
    await c.connect();
    try {
      return (await c.query(text, values)).rows;
    } finally {
      await c.end();
    }
  };
  const sluice = async (args: string[]) => {
    const r = await runCli(args, { env });
    expect(r.code, `sluice ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const sourceHash = async () =>
    asHash((await shop(pgHashSql('orders', PG_ORDERS_ROW("placed_at AT TIME ZONE 'UTC'"))))[0]);
  const targetHash = async () => asHash((await replica.query(mysqlHashSql('orders', MYSQL_ORDERS_ROW)))[0]);
  const run = async () => {
    const out = await sluice(['pipelines', 'execute', ...where, '--pipeline', 'orders-replica', '--wait']);
    expect(out).toMatch(/orders-replica in dev +succeeded/);
    return out;
  };
  const slots = async () =>
    (await shop(`SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE 'sluice\\_%'`)).map(
      (r) => r.slot_name as string,
    );

  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: { wal_level: 'logical' } });
    shopUrl = await createDatabase(cluster.url, 'shop');
    await shop(fs.readFileSync(path.join(example, 'source.postgres.sql'), 'utf8'));
    replica = await createMysqlDatabase(REPLICA_DB);
    await replica.query(fs.readFileSync(path.join(example, 'target.mysql.sql'), 'utf8'));
    s = await scratchRuntime(STORE_DB);
    serve = startCli(['serve', '--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'], { env: s.env });
    const [, apiUrl] = await serve.waitForStdout(/API host: (http:\/\/\S+)/);
    env = {
      SLUICE_BASE_URL: apiUrl,
      SLUICE_TOKEN: s.token,
      SLUICE_ORG: 'acme',
      ORDERS_PG_PORT: String(cluster.port),
      ORDERS_PG_PASSWORD: '',
      REPLICA_MYSQL_DATABASE: REPLICA_DB,
      REPLICA_MYSQL_PASSWORD: '',
    };
  }, 120_000);

  afterAll(async () => {
    if (serve && serve.child.exitCode === null) serve.child.kill('SIGTERM');
    await serve?.exited;
    await s?.close();
    await replica?.drop();
    await cluster?.destroy();
  });

  it('snapshot, inserts, updates (a TOAST value left alone) and deletes: the replica equals the source after every run', async () => {
    // 200 orders; every 25th has a 12 KiB note PostgreSQL keeps out of line (TOAST).
    await shop(`INSERT INTO orders
      SELECT g, 'customer ' || g || CASE WHEN g % 7 = 0 THEN ' Zoë' ELSE '' END, round(g * 1.37, 2), 'new',
             timestamptz '2026-01-01 00:00:00.123456+00' + g * interval '1 hour 1.000001 second',
             CASE WHEN g % 10 = 0 THEN NULL WHEN g % 25 = 1 THEN big ELSE 'note ' || g END
        FROM generate_series(1, 200) g,
             (SELECT string_agg(md5(i::text), '') AS big FROM generate_series(1, 400) i) b`);
    const toast = (
      await shop(`SELECT reltoastrelid::regclass::text AS t FROM pg_class WHERE relname = 'orders'`)
    )[0].t;
    expect(Number((await shop(`SELECT count(DISTINCT chunk_id) AS n FROM ${toast}`))[0].n)).toBe(8);

    const plan = await sluice(['apply', '-f', example, '--dry-run']);
    expect(plan).toMatch(/^create +DataSource orders-db$/m);
    expect(plan).toMatch(/^create +Deployment orders\/dev\/orders-replica/m);
    expect(await sluice(['apply', '-f', example])).toContain('applied: 8 created, 0 updated, 0 unchanged');

    // The snapshot.
    const first = await run();
    expect(first).toMatch(/orders-changes +succeeded +rows in 0 out 200/);
    expect(await targetHash()).toEqual(await sourceHash());
    expect((await targetHash()).rows).toBe(200);

    // Inserts, updates that leave the TOASTed notes alone, deletes; in several transactions.
    await shop(
      `INSERT INTO orders SELECT g, 'late ' || g, g, 'new', now(), NULL FROM generate_series(201, 260) g`,
    );
    await shop(`UPDATE orders SET status = 'shipped', amount = amount + 1 WHERE id % 3 = 0`);
    await shop(`DELETE FROM orders WHERE id % 11 = 0`);
    const second = await run();
    expect(second).toMatch(/orders-changes +succeeded +rows in 0 out [1-9]/);
    const afterSecond = await targetHash();
    expect(afterSecond).toEqual(await sourceHash());
    // Order 51 kept its 12 KiB note through an update that did not send it.
    expect((await replica.query('SELECT length(note) AS n, status FROM orders WHERE id = 51'))[0]).toEqual({
      n: 12800,
      status: 'shipped',
    });

    // A key deleted and inserted again, a TOASTed value changed, a row updated twice in one
    // transaction, and a delete of a row the snapshot copied.
    await shop(
      `INSERT INTO orders VALUES (11, 'again', 0.01, 'new', '2026-02-28 23:59:59.999999+00', 'back')`,
    );
    await shop(`UPDATE orders SET note = note || '!' WHERE id = 26`);
    await shop(
      `BEGIN; UPDATE orders SET status = 'paid' WHERE id = 2; UPDATE orders SET status = 'done', note = NULL WHERE id = 2; COMMIT`,
    );
    await shop('DELETE FROM orders WHERE id IN (1, 76)');
    await run();
    expect(await targetHash()).toEqual(await sourceHash());
    expect(await targetHash()).not.toEqual(afterSecond);
    // A quiet run changes nothing.
    await run();
    expect(await targetHash()).toEqual(await sourceHash());

    // Insert, truncate, insert in one run (docs/cdc.md "Truncates"): the replica is emptied in
    // order, inside the sink's transaction, and holds only the last insert.
    await shop(`INSERT INTO orders VALUES (900, 'before', 1, 'new', now(), NULL)`);
    await shop('TRUNCATE orders');
    await shop(`INSERT INTO orders VALUES (901, 'after', 2, 'new', now(), 'kept')`);
    expect(await run()).toMatch(/orders-changes +succeeded +rows in 0 out 3/);
    expect(await targetHash()).toEqual(await sourceHash());
    expect(await replica.query('SELECT id FROM orders')).toEqual([{ id: 901 }]);

    // The capture, as `sluice cdc slots` shows it, then released by undeploy.
    const [slot] = await slots();
    expect(slot).toMatch(/^sluice_[0-9a-f]{24}$/);
    const listed = await sluice(['cdc', 'slots', '--data-source', 'orders-db']);
    expect(listed).toMatch(new RegExp(`^${slot} .* orders/orders-replica/orders-changes@dev$`, 'm'));
    expect(await sluice(['pipelines', 'undeploy', ...where, '--pipeline', 'orders-replica'])).toMatch(
      /^undeployed [0-9a-f]+ from dev/m,
    );
    await waitUntil(slots, (names) => names.length === 0, 60_000);
    expect(await shop(`SELECT pubname FROM pg_publication WHERE pubname = $1`, [slot])).toEqual([]);
    expect(await sluice(['cdc', 'slots', '--data-source', 'orders-db'])).not.toContain(slot);

    // Deployed again, the committed position's slot is gone: the run refuses rather than skip
    // what may be lost, and a reset of the checkpoints takes a new snapshot.
    await shop(`UPDATE orders SET status = 'while-away' WHERE id <= 5`);
    await sluice(['apply', '-f', example]);
    const refused = await runCli(
      ['pipelines', 'execute', ...where, '--pipeline', 'orders-replica', '--wait'],
      {
        env,
      },
    );
    expect(refused.code).not.toBe(0);
    expect(`${refused.stdout}${refused.stderr}`).toMatch(
      /no longer exists: changes since the committed position may be lost/,
    );
    expect(await sluice(['checkpoints', 'reset', ...where, 'orders-replica'])).toContain('reset: done');
    await run();
    expect(await targetHash()).toEqual(await sourceHash());
  }, 300_000);
});
