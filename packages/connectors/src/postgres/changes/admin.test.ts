import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresCluster } from '../../../../../test/peers/postgres-cluster';
import { clusterConnection, startCdcCluster } from '../../../../../test/support/cdc-cluster';
import { egressPolicy } from '../../egress';
import { type ConnectorContext, defaultLimits } from '../../types';
import type { PgConnection } from '../connect';
import { pgCaptures, pgRelease } from './admin';

// Slot safety on a real cluster with wal_level=logical (docs/cdc.md "Slot safety"): the slots
// are made here as a capture makes them, and the WAL behind them is real WAL.

const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

describe('postgres captures and release', () => {
  let cluster: PostgresCluster;
  let admin: pg.Client;
  let conn: PgConnection;

  beforeAll(async () => {
    cluster = await startCdcCluster(10);
    admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE TABLE orders (id int PRIMARY KEY, note text)');
    conn = clusterConnection(cluster);
  }, 120_000);
  afterAll(async () => {
    await admin?.end();
    await cluster?.destroy();
  });

  const makeCapture = async (name: string) => {
    await admin.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [name]);
    await admin.query(`CREATE PUBLICATION ${name} FOR TABLE orders`);
  };

  it('lists the prefixed slots of the database with the WAL they retain, growing with writes', async () => {
    await makeCapture('sluice_aaaa');
    await admin.query("SELECT pg_create_logical_replication_slot('other_slot', 'pgoutput')");
    const before = await pgCaptures(conn, 'sluice_', ctx);
    expect(before.map((c) => c.name)).toEqual(['sluice_aaaa']);
    const [first] = before;
    expect(first.active).toBe(false);
    expect(first.confirmed_position).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(first.wal_status).toBe('reserved');
    expect(first.safe_wal_bytes).toBeNull(); // max_slot_wal_keep_size is -1 by default

    await admin.query("INSERT INTO orders SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g");
    const [after] = await pgCaptures(conn, 'sluice_', ctx);
    expect(after.lag_bytes).toBeGreaterThan((first.lag_bytes ?? 0) + 1_000_000);
    expect(after.confirmed_position).toBe(first.confirmed_position);
    await admin.query("SELECT pg_drop_replication_slot('other_slot')");
  });

  it('release drops the slot and the publication, and again is no error', async () => {
    await makeCapture('sluice_bbbb');
    await pgRelease(conn, 'sluice_bbbb', ctx);
    const slots = await admin.query("SELECT 1 FROM pg_replication_slots WHERE slot_name = 'sluice_bbbb'");
    const pubs = await admin.query("SELECT 1 FROM pg_publication WHERE pubname = 'sluice_bbbb'");
    expect(slots.rowCount).toBe(0);
    expect(pubs.rowCount).toBe(0);
    await pgRelease(conn, 'sluice_bbbb', ctx);
  });

  it('release terminates a reader that holds the slot', async () => {
    await makeCapture('sluice_cccc');
    // A session that streams from the slot holds it active until it ends.
    const reader = new pg.Client({ connectionString: cluster.url, replication: 'database' } as any);
    reader.on('error', () => {});
    await reader.connect();
    reader
      .query(
        "START_REPLICATION SLOT sluice_cccc LOGICAL 0/0 (proto_version '1', publication_names 'sluice_cccc')",
      )
      .catch(() => {});
    let active = false;
    for (let i = 0; i < 50 && !active; i++) {
      active = (await pgCaptures(conn, 'sluice_cccc', ctx))[0]?.active === true;
      if (!active) await new Promise((r) => setTimeout(r, 50));
    }
    expect(active).toBe(true);
    await pgRelease(conn, 'sluice_cccc', ctx);
    expect(await pgCaptures(conn, 'sluice_cccc', ctx)).toEqual([]);
    await reader.end().catch(() => {});
  });

  it('refuses a name that is not a capture name without touching the server', async () => {
    await expect(pgRelease(conn, 'x; DROP TABLE orders', ctx)).rejects.toMatchObject({
      code: 'INVALID_STATEMENT',
    });
  });
});
