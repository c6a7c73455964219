import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresCluster } from '../../../../../test/peers/postgres-cluster';
import { clusterConnection, startCdcCluster } from '../../../../../test/support/cdc-cluster';
import { collect, stepContext } from '../../../../../test/support/step-context';
import { egressPolicy } from '../../egress';
import { createSessionPool, type SessionPool } from '../../session-pool';
import { type ConnectorContext, defaultLimits } from '../../types';
import type { PgConnection } from '../connect';
import { postgres } from '../index';
import { STREAM_APPLICATION } from './session-names';

// The replication session kept between reads (docs/cdc.md "The replication session"), on its
// own cluster with wal_level=logical. A session pool stands for one worker process: two pools
// are two workers. Every read is checked by applying its rows by key and comparing with the
// source table.

const base: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
const changes = postgres.changes;

let cluster: PostgresCluster;
let db: pg.Client;
let conn: PgConnection;
const sql = async (text: string, values: unknown[] = []) => (await db.query(text, values)).rows;

beforeAll(async () => {
  cluster = await startCdcCluster();
  db = new pg.Client({ connectionString: cluster.url });
  await db.connect();
  conn = clusterConnection(cluster);
});

afterAll(async () => {
  await db?.end();
  await cluster?.destroy();
});

type Row = Record<string, unknown>;
let runs = 0;

async function read(
  capture: string,
  op: Record<string, unknown>,
  cursor: string | null,
  pool: SessionPool | null,
  opts: { attempt?: number; stopAfterOne?: boolean } = {},
) {
  const step = stepContext(
    { kind: 'source', data_source_ref: 'db', operation: { operation_type: 'cdc', ...op } },
    { cursor },
  );
  const out = await changes.read(conn, { ...step, runSlug: `run-${++runs}` }, capture, {
    ...base,
    attempt: opts.attempt ?? 1,
    ...(pool ? { sessions: pool } : {}),
  });
  if (out.payload.kind !== 'rows') throw new Error('rows expected');
  const columns = out.payload.columns.map((c) => c.name);
  if (opts.stopAfterOne) {
    // A consumer that fails after the first batch: the run fails, its position is never committed.
    const it = out.payload.batches[Symbol.asyncIterator]();
    await it.next();
    await it.return?.(undefined);
    return { rows: [] as Row[], cursor: null };
  }
  const { items } = await collect(out.payload);
  const rows = (items as unknown[][]).map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])) as Row);
  return { rows, cursor: await out.nextCursor() };
}

function apply(target: Map<number, Row>, rows: Row[]) {
  for (const r of rows) {
    if (r._op === 'delete') target.delete(Number(r.id));
    else target.set(Number(r.id), { id: Number(r.id), qty: r.qty, price: r.price, doc: r.doc });
  }
}

async function sourceOf(table: string) {
  const rows = await sql(`SELECT id, qty, price, doc FROM ${table} ORDER BY id`);
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
const targetOf = (target: Map<number, Row>) =>
  [...target.values()].sort((a, b) => Number(a.id) - Number(b.id));

/** The walsender serving the capture's slot, or null. */
async function walsender(capture: string): Promise<number | null> {
  const r = await sql(
    `SELECT s.active_pid AS pid, a.application_name AS app FROM pg_replication_slots s
       LEFT JOIN pg_stat_replication a ON a.pid = s.active_pid WHERE s.slot_name = $1`,
    [capture],
  );
  if (!r[0] || r[0].pid === null) return null;
  expect(r[0].app).toBe(STREAM_APPLICATION);
  return Number(r[0].pid);
}

async function gone(capture: string) {
  for (let i = 0; i < 100 && (await walsender(capture)) !== null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return (await walsender(capture)) === null;
}

async function table(name: string) {
  await sql(`CREATE TABLE ${name} (id int PRIMARY KEY, qty int, price numeric(12,4), doc jsonb)`);
}
/** Transactions of 500 changes: inserts, updates and deletes of ids from `from`. */
async function burst(name: string, from: number) {
  await sql(
    `INSERT INTO ${name} SELECT g, g, g / 7.0, jsonb_build_object('g', g) FROM generate_series($1::int, $1::int + 999) g`,
    [from],
  );
  await sql(`UPDATE ${name} SET qty = qty + 1, price = price * 2 WHERE id BETWEEN $1 AND $1 + 499`, [from]);
  await sql(`DELETE FROM ${name} WHERE id BETWEEN $1 + 500 AND $1 + 699`, [from]);
}

describe('PostgreSQL change capture: the replication session kept between reads', () => {
  it('consecutive reads go on in the same session; a read from another position opens a new one', async () => {
    const pool = createSessionPool({ maxIdle: 4 });
    try {
      await table('public.held_a');
      const op = { tables: ['public.held_a'], snapshot: 'never', max_changes: 700 };
      let cursor = (await read('sluice_held_a', op, null, pool)).cursor;
      await burst('public.held_a', 1);
      const target = new Map<number, Row>();
      const pids = new Set<number | null>();
      const sizes: number[] = [];
      for (;;) {
        const r = await read('sluice_held_a', op, cursor, pool);
        apply(target, r.rows);
        sizes.push(r.rows.length);
        cursor = r.cursor;
        pids.add(await walsender('sluice_held_a'));
        if (r.rows.length === 0) break;
      }
      // 1,000 inserts, 500 updates, 200 deletes (a transaction each): a read stops after the transaction reaching 700.
      expect(sizes).toEqual([1000, 700, 0]);
      expect(pids.size).toBe(1);
      expect([...pids][0]).not.toBeNull();
      // The held session reads the values exactly as a new one does.
      expect(targetOf(target)).toEqual(await sourceOf('public.held_a'));
      // More changes while it is held: they wait in the session for the next read.
      await burst('public.held_a', 5001);
      const more = await read('sluice_held_a', op, cursor, pool);
      expect(await walsender('sluice_held_a')).toBe([...pids][0]);
      apply(target, more.rows);
      // A read whose position was not committed (its run failed): the next read starts again
      // from the committed position, in a new session.
      const again = await read('sluice_held_a', op, cursor, pool);
      expect(again.rows).toEqual(more.rows);
      const pid2 = await walsender('sluice_held_a');
      expect(pid2).not.toBe([...pids][0]);
      cursor = again.cursor;
      for (;;) {
        const r = await read('sluice_held_a', op, cursor, pool);
        apply(target, r.rows);
        cursor = r.cursor;
        if (r.rows.length === 0) break;
      }
      expect(await walsender('sluice_held_a')).toBe(pid2);
      expect(targetOf(target)).toEqual(await sourceOf('public.held_a'));
      // Kept idle between runs, the session is on the slot but no read is: the capture is not active.
      const idle = (await changes.captures(conn, 'sluice_held_a', base)).find(
        (c) => c.name === 'sluice_held_a',
      );
      expect(idle?.active).toBe(false);
      // While a read streams from it, it is.
      await burst('public.held_a', 9001);
      const step = stepContext(
        { kind: 'source', data_source_ref: 'db', operation: { operation_type: 'cdc', ...op } },
        { cursor },
      );
      const out = await changes.read(conn, { ...step, runSlug: `run-${++runs}` }, 'sluice_held_a', {
        ...base,
        sessions: pool,
      });
      if (out.payload.kind !== 'rows') throw new Error('rows expected');
      const batches = out.payload.batches[Symbol.asyncIterator]();
      await batches.next();
      const reading = (await changes.captures(conn, 'sluice_held_a', base)).find(
        (c) => c.name === 'sluice_held_a',
      );
      expect(reading?.active).toBe(true);
      await batches.return?.(undefined);
      // The worker stops: its held sessions end.
      await pool.close();
      expect(await gone('sluice_held_a')).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('a column added between two reads of a kept session reaches the next read with its values', async () => {
    const pool = createSessionPool({ maxIdle: 4 });
    try {
      await table('public.held_e');
      const op = { tables: ['public.held_e'], snapshot: 'never', max_changes: 100_000 };
      let cursor = (await read('sluice_held_e', op, null, pool)).cursor;
      await sql(`INSERT INTO public.held_e VALUES (1, 1, 1.5, '{"a": 1}')`);
      const one = await read('sluice_held_e', op, cursor, pool);
      expect(one.rows.map((r) => [r.id, r.price, r.doc])).toEqual([[1, '1.5000', { a: 1 }]]);
      cursor = one.cursor;
      const pid = await walsender('sluice_held_e');
      await sql('ALTER TABLE public.held_e ADD COLUMN tag text');
      await sql(`INSERT INTO public.held_e VALUES (2, 2, 2.25, '{"b": [1, 2]}', 'new')`);
      await sql('UPDATE public.held_e SET qty = 10 WHERE id = 1');
      const two = await read('sluice_held_e', op, cursor, pool);
      expect(await walsender('sluice_held_e')).toBe(pid);
      expect(two.rows.map((r) => [r._op, r.id, r.qty, r.price, r.doc, r.tag])).toEqual([
        ['insert', 2, 2, '2.2500', { b: [1, 2] }, 'new'],
        ['update', 1, 10, '1.5000', { a: 1 }, null],
      ]);
    } finally {
      await pool.close();
    }
  });

  it('a failed read, and a retried attempt, do not keep or use the session', async () => {
    const pool = createSessionPool({ maxIdle: 4 });
    try {
      await table('public.held_b');
      const op = { tables: ['public.held_b'], snapshot: 'never', max_changes: 100_000 };
      const first = await read('sluice_held_b', op, null, pool);
      await sql(`INSERT INTO public.held_b SELECT g, g, g, '{}' FROM generate_series(1, 30000) g`);
      await read('sluice_held_b', op, first.cursor, pool, { stopAfterOne: true });
      expect(await gone('sluice_held_b')).toBe(true);
      const whole = await read('sluice_held_b', op, first.cursor, pool);
      expect(whole.rows).toHaveLength(30000);
      const held = await walsender('sluice_held_b');
      expect(held).not.toBeNull();
      // A second attempt of the run after it (its checkpoint is not committed): a new session.
      const retried = await read('sluice_held_b', op, first.cursor, pool, { attempt: 2 });
      expect(retried.rows).toHaveLength(30000);
      expect(await walsender('sluice_held_b')).not.toBe(held);
    } finally {
      await pool.close();
    }
  });

  it('another worker takes the slot over from an idle session, never from a running read', async () => {
    const one = createSessionPool({ maxIdle: 4 });
    const two = createSessionPool({ maxIdle: 4 });
    const other = new pg.Client({ connectionString: cluster.url });
    await other.connect();
    try {
      await table('public.held_c');
      const op = { tables: ['public.held_c'], snapshot: 'never', max_changes: 700 };
      const target = new Map<number, Row>();
      let cursor = (await read('sluice_held_c', op, null, one)).cursor;
      await burst('public.held_c', 1);
      let r = await read('sluice_held_c', op, cursor, one);
      apply(target, r.rows);
      cursor = r.cursor;
      const idle = await walsender('sluice_held_c');
      expect(idle).not.toBeNull();
      // A read of the capture in progress holds its lock (take-over.ts): the slot is not taken.
      await other.query(`SELECT pg_advisory_lock(20942, hashtext('sluice_held_c'))`);
      const refused = await read('sluice_held_c', op, cursor, two).then(
        () => null,
        (e) => e,
      );
      expect(refused?.message).toMatch(/in use by another session/);
      expect(await walsender('sluice_held_c')).toBe(idle);
      await other.query(`SELECT pg_advisory_unlock(20942, hashtext('sluice_held_c'))`);
      // Nobody reads: the second worker ends the idle session and goes on from the checkpoint.
      r = await read('sluice_held_c', op, cursor, two);
      apply(target, r.rows);
      cursor = r.cursor;
      const taken = await walsender('sluice_held_c');
      expect(taken).not.toBe(idle);
      // Back on the first worker: its held session is gone; it takes the slot back.
      for (;;) {
        r = await read('sluice_held_c', op, cursor, one);
        apply(target, r.rows);
        cursor = r.cursor;
        if (r.rows.length === 0) break;
      }
      expect([idle, taken, null]).not.toContain(await walsender('sluice_held_c'));
      expect(targetOf(target)).toEqual(await sourceOf('public.held_c'));
    } finally {
      await other.end();
      await one.close();
      await two.close();
    }
  });

  it('a session ended by the source, a restart or a release: the next read reconnects, or the slot is gone', async () => {
    const pool = createSessionPool({ maxIdle: 4 });
    try {
      await table('public.held_d');
      const op = { tables: ['public.held_d'], snapshot: 'never', max_changes: 100_000 };
      const target = new Map<number, Row>();
      let cursor = (await read('sluice_held_d', op, null, pool)).cursor;
      await burst('public.held_d', 1);
      let r = await read('sluice_held_d', op, cursor, pool);
      apply(target, r.rows);
      cursor = r.cursor;
      expect(await walsender('sluice_held_d')).not.toBeNull();
      await db.end();
      await cluster.stop('immediate');
      await cluster.start();
      db = new pg.Client({ connectionString: cluster.url });
      await db.connect();
      await burst('public.held_d', 5001);
      r = await read('sluice_held_d', op, cursor, pool);
      apply(target, r.rows);
      cursor = r.cursor;
      expect(targetOf(target)).toEqual(await sourceOf('public.held_d'));
      expect(await walsender('sluice_held_d')).not.toBeNull();
      // Undeploy, delete or `sluice cdc slots drop` while a session is held: the slot goes.
      await changes.release(conn, 'sluice_held_d', base);
      expect(await changes.captures(conn, 'sluice_held_d', base)).toEqual([]);
      const lost = await read('sluice_held_d', op, cursor, pool).then(
        () => null,
        (e) => e,
      );
      expect(lost?.message).toMatch(/no longer exists/);
    } finally {
      await pool.close();
    }
  });
});
