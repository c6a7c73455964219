import { randomBytes } from 'node:crypto';
import mysqlDriver from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { egressPolicy } from './egress';
import { queryMysql } from './mysql/connect';
import { mysqlConfigSchema } from './mysql/index';
import { openMysqlSession } from './mysql/session';
import { postgresConfigSchema } from './postgres/index';
import { openPgSession, warmPgSession } from './postgres/session';
import { createSessionPool, type SessionPool, sessionKey } from './session-pool';
import { type ConnectorContext, defaultLimits } from './types';

// The worker's session pool on the real PostgreSQL (127.0.0.1:5432) and MariaDB (127.0.0.1:3306):
// a session that ended cleanly is reused, and comes back as a new session would be; one that
// errored or was left in a transaction is not.

const PG_URL = new URL(process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const MY_HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
const MY_PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);
const MY_DB = `sluice_pool_${randomBytes(4).toString('hex')}`;
const policy = egressPolicy('self_hosted', true);

const pgConn = (password = 'unused') => ({
  config: postgresConfigSchema.parse({
    host: PG_URL.hostname,
    port: Number(PG_URL.port || 5432),
    database: PG_URL.pathname.slice(1) || 'postgres',
    user: PG_URL.username || 'postgres',
    allow_private_hosts: true,
    statement_timeout_seconds: 7,
  }),
  credentials: { password },
});
const myConn = () => ({
  config: mysqlConfigSchema.parse({
    host: MY_HOST,
    port: MY_PORT,
    database: MY_DB,
    user: 'root',
    allow_private_hosts: true,
    statement_timeout_seconds: 7,
  }),
  credentials: { password: '' },
});

let pool: SessionPool;
let ctx: ConnectorContext;
const signal = new AbortController().signal;

beforeAll(async () => {
  const admin = await mysqlDriver.createConnection({ host: MY_HOST, port: MY_PORT, user: 'root' });
  await admin.query(`CREATE DATABASE ${MY_DB}`);
  await admin.end();
});
afterAll(async () => {
  const admin = await mysqlDriver.createConnection({ host: MY_HOST, port: MY_PORT, user: 'root' });
  await admin.query(`DROP DATABASE IF EXISTS ${MY_DB}`);
  await admin.end();
});

describe('session pool', () => {
  beforeAll(() => {
    pool = createSessionPool({ maxIdle: 4 });
    ctx = { policy, limits: defaultLimits, sessions: pool };
  });
  afterAll(async () => {
    await pool.close();
  });

  it('keys sessions by a digest, never by the secret', () => {
    const identity = { type: 'postgres', config: pgConn().config, readOnly: false, policy };
    const a = sessionKey({ ...identity, credentials: { password: 'hunter2-secret' } });
    const b = sessionKey({ ...identity, credentials: { password: 'other' } });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(sessionKey({ ...identity, credentials: { password: 'other' }, readOnly: true })).not.toBe(b);
  });

  it('reuses a PostgreSQL session after DISCARD ALL, keeping its connect-time settings', async () => {
    const before = pool.stats();
    const s1 = await openPgSession(pgConn(), ctx, signal, { readOnly: true });
    const pid = (await s1.client.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    // Allowed in the session, and undone by the reset: the source stays read-only.
    await s1.client.query('SET default_transaction_read_only = off');
    await s1.client.query('CREATE TEMPORARY TABLE pooled_scratch (a int)');
    await s1.client.query("SET application_name = 'changed'");
    await s1.client.query({ name: 'pooled_stmt', text: 'SELECT 1 AS one' });
    await s1.close();

    const s2 = await openPgSession(pgConn(), ctx, signal, { readOnly: true });
    expect((await s2.client.query('SELECT pg_backend_pid() AS p')).rows[0].p).toBe(pid);
    expect((await s2.client.query("SELECT to_regclass('pooled_scratch') AS r")).rows[0].r).toBeNull();
    expect((await s2.client.query('SHOW application_name')).rows[0].application_name).toBe('sluice');
    expect((await s2.client.query('SHOW default_transaction_read_only')).rows[0]).toEqual({
      default_transaction_read_only: 'on',
    });
    expect((await s2.client.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('7s');
    // The named statement was deallocated by the reset; pg parses it again.
    expect((await s2.client.query({ name: 'pooled_stmt', text: 'SELECT 1 AS one' })).rows).toEqual([
      { one: 1 },
    ]);
    await s2.close();
    const after = pool.stats();
    expect(after.opened - before.opened).toBe(1);
    expect(after.reused - before.reused).toBe(1);
  });

  it('does not hand out a session across credentials or the read-only flag', async () => {
    const before = pool.stats();
    const a = await openPgSession(pgConn('one'), ctx, signal);
    await a.close();
    const b = await openPgSession(pgConn('two'), ctx, signal);
    await b.close();
    const c = await openPgSession(pgConn('two'), ctx, signal, { readOnly: true });
    expect(
      (await c.client.query('SHOW default_transaction_read_only')).rows[0].default_transaction_read_only,
    ).toBe('on');
    await c.close();
    expect(pool.stats().opened - before.opened).toBe(3);
  });

  it('drops a PostgreSQL session left in a transaction or after an error', async () => {
    const conn = pgConn('tx');
    const s1 = await openPgSession(conn, ctx, signal);
    const pid1 = (await s1.client.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    await s1.client.query('BEGIN');
    await s1.close();
    const s2 = await openPgSession(conn, ctx, signal);
    const pid2 = (await s2.client.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    expect(pid2).not.toBe(pid1);
    await s2.client.query('SELECT no_such_column').catch((err) => s2.error(err));
    await s2.close();
    const s3 = await openPgSession(conn, ctx, signal);
    expect((await s3.client.query('SELECT pg_backend_pid() AS p')).rows[0].p).not.toBe(pid2);
    await s3.close();
  });

  it('reuses a MariaDB session after COM_RESET_CONNECTION, with its limits set again', async () => {
    const before = pool.stats();
    const s1 = await openMysqlSession(myConn(), ctx, signal, { readOnly: true });
    const [{ id }] = await queryMysql<{ id: number }[]>(s1.connection, 'SELECT CONNECTION_ID() AS id');
    await queryMysql(s1.connection, 'SET SESSION TRANSACTION READ WRITE');
    await queryMysql(s1.connection, 'CREATE TEMPORARY TABLE pooled_scratch (a int)');
    await queryMysql(s1.connection, 'SET @pooled = 42');
    await s1.close();

    const s2 = await openMysqlSession(myConn(), ctx, signal, { readOnly: true });
    const [row] = await queryMysql<any[]>(
      s2.connection,
      'SELECT CONNECTION_ID() AS id, @pooled AS v, @@session.max_statement_time AS t, @@session.tx_read_only AS ro',
    );
    expect(row.id).toBe(id);
    expect(row.v).toBeNull();
    expect(Number(row.t)).toBe(7);
    expect(Number(row.ro)).toBe(1);
    const gone = await queryMysql(s2.connection, 'SELECT * FROM pooled_scratch').then(
      () => false,
      () => true,
    );
    expect(gone).toBe(true);
    await s2.close();
    expect(pool.stats().opened - before.opened).toBe(1);
  });

  it('drops a MariaDB session that errored or was closed abruptly', async () => {
    const s1 = await openMysqlSession(myConn(), ctx, signal);
    const [{ id: id1 }] = await queryMysql<{ id: number }[]>(s1.connection, 'SELECT CONNECTION_ID() AS id');
    await queryMysql(s1.connection, 'SELECT no_such_column').catch((err) => s1.error(err));
    await s1.close();
    const s2 = await openMysqlSession(myConn(), ctx, signal);
    const [{ id: id2 }] = await queryMysql<{ id: number }[]>(s2.connection, 'SELECT CONNECTION_ID() AS id');
    expect(id2).not.toBe(id1);
    await s2.close(true);
    const s3 = await openMysqlSession(myConn(), ctx, signal);
    const [{ id: id3 }] = await queryMysql<{ id: number }[]>(s3.connection, 'SELECT CONNECTION_ID() AS id');
    expect(id3).not.toBe(id2);
    await s3.close();
  });

  it('warms a session ahead: an acquire that comes before its open ends waits for it and takes it', async () => {
    const own = createSessionPool({ maxIdle: 4 });
    const octx = { ...ctx, sessions: own };
    warmPgSession(pgConn('warm'), octx, { readOnly: false });
    // A second warm of the same key while the first is opening opens nothing more.
    warmPgSession(pgConn('warm'), octx, { readOnly: false });
    const s = await openPgSession(pgConn('warm'), octx, signal);
    expect(own.stats()).toMatchObject({ opened: 1, reused: 1 });
    const pid = (await s.client.query('SELECT pg_backend_pid() AS p')).rows[0].p;
    await s.close();
    // Idle once its reset is done: warming the key again opens nothing.
    const again = await openPgSession(pgConn('warm'), octx, signal);
    expect((await again.client.query('SELECT pg_backend_pid() AS p')).rows[0].p).toBe(pid);
    await again.close();
    await vi.waitFor(() => expect(own.stats().idle).toBe(1), { timeout: 10_000 });
    warmPgSession(pgConn('warm'), octx, { readOnly: false });
    // Another identity (read-only) is a key of its own: warmed, it is idle once open.
    warmPgSession(pgConn('warm'), octx, { readOnly: true });
    await vi.waitFor(() => expect(own.stats()).toMatchObject({ opened: 2, idle: 2 }), { timeout: 10_000 });
    await own.close();
    expect(own.stats()).toMatchObject({ closed: 2, idle: 0 });
  });

  it('fails the acquires that waited for a warm open that timed out with its error; after another failure they open their own', async () => {
    const own = createSessionPool({ maxIdle: 4 });
    const octx = { ...ctx, sessions: own };
    const nowhere = pgConn('nowhere');
    nowhere.config = { ...nowhere.config, port: 1 };
    warmPgSession(nowhere, octx, { readOnly: false });
    await expect(openPgSession(nowhere, octx, signal)).rejects.toMatchObject({ code: 'CONNECTION_FAILED' });
    expect(own.stats()).toMatchObject({ opened: 0, idle: 0 });
    // Counted on a session kind of the test's own: the waiting acquire did not open again.
    let opens = 0;
    let fail: (err: Error) => void = () => {};
    const kind = {
      open: () => {
        opens++;
        return opens === 1
          ? new Promise<string>((_, reject) => (fail = reject))
          : Promise.resolve(`s${opens}`);
      },
      reset: async () => {},
      close: async () => {},
      onGone: () => {},
    };
    const identity = { type: 'test', config: {}, credentials: {}, readOnly: false, policy };
    own.warm(identity, kind);
    const waiting = own.acquire(identity, kind);
    fail(Object.assign(new Error('no answer'), { code: 'TIMEOUT' }));
    await expect(waiting).rejects.toThrow('no answer');
    expect(opens).toBe(1);
    const later = await own.acquire(identity, kind);
    expect(later).toMatchObject({ session: 's2', reused: false });
    await later.release(false);
    // A refused warm open: the acquire that waited for it opens its own.
    own.warm(identity, {
      ...kind,
      open: () => Promise.reject(Object.assign(new Error('refused'), { code: 'CONNECTION_FAILED' })),
    });
    expect(await own.acquire(identity, kind)).toMatchObject({ session: 's3', reused: false });
    // An acquire whose signal aborts stops waiting for a warm open and opens its own.
    let opened: (s: string) => void = () => {};
    own.warm(identity, { ...kind, open: () => new Promise<string>((resolve) => (opened = resolve)) });
    const abort = new AbortController();
    const own2 = own.acquire(identity, kind, abort.signal);
    abort.abort();
    expect(await own2).toMatchObject({ session: 's4', reused: false });
    opened('late');
    await own.close();
  });

  it('closes a session it warms once the pool is closed', async () => {
    const own = createSessionPool({ maxIdle: 4 });
    warmPgSession(pgConn('late'), { ...ctx, sessions: own }, { readOnly: false });
    await own.close();
    expect(own.stats()).toMatchObject({ opened: 1, closed: 1, idle: 0 });
    // A closed pool warms nothing.
    warmPgSession(pgConn('later'), { ...ctx, sessions: own }, { readOnly: false });
    expect(own.stats().opened).toBe(1);
  });

  it('closes its idle sessions, and a session handed back after close', async () => {
    const own = createSessionPool({ maxIdle: 1 });
    const octx = { ...ctx, sessions: own };
    const a = await openPgSession(pgConn('x'), octx, signal);
    const b = await openPgSession(pgConn('x'), octx, signal);
    await a.close();
    await b.close();
    // maxIdle 1: one of the two was closed on return (once their resets, which go on after
    // close returns, are done).
    await vi.waitFor(() => expect(own.stats()).toMatchObject({ opened: 2, closed: 1, idle: 1 }), {
      timeout: 10_000,
    });
    const c = await openPgSession(pgConn('x'), octx, signal);
    await own.close();
    await c.close();
    expect(own.stats()).toMatchObject({ closed: 2, idle: 0 });
  });
});
