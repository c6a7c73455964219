import { randomBytes } from 'node:crypto';
import mysqlDriver from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { egressPolicy } from '../egress';
import { createSessionPool } from '../session-pool';
import { type ConnectorContext, defaultLimits } from '../types';
import { queryMysql } from './connect';
import { mysqlConfigSchema } from './index';
import { openMysqlSession } from './session';

// A pipeline session torn down mid-statement (a canceled run) has its statement stopped on the
// server (kill.ts): a closed socket alone leaves MariaDB computing until it next writes.

const HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
const PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);
const DB = `sluice_kill_${randomBytes(4).toString('hex')}`;
const pool = createSessionPool({ maxIdle: 2 });
const ctx: ConnectorContext = {
  policy: egressPolicy('self_hosted', true),
  limits: defaultLimits,
  sessions: pool,
};
const conn = {
  config: mysqlConfigSchema.parse({
    host: HOST,
    port: PORT,
    database: DB,
    user: 'root',
    allow_private_hosts: true,
    statement_timeout_seconds: 60,
  }),
  credentials: { password: '' },
};
let admin: mysqlDriver.Connection;

beforeAll(async () => {
  admin = await mysqlDriver.createConnection({ host: HOST, port: PORT, user: 'root' });
  await admin.query(`CREATE DATABASE ${DB}`);
});
afterAll(async () => {
  await pool.close();
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.end();
});

const running = async (thread: number) => {
  const [rows] = await admin.query<mysqlDriver.RowDataPacket[]>(
    `SELECT COMMAND FROM information_schema.PROCESSLIST WHERE ID = ? AND COMMAND = 'Query'`,
    [thread],
  );
  return rows.length > 0;
};

describe('a MySQL/MariaDB session torn down mid-statement', () => {
  it('has its statement stopped on the server', async () => {
    const cancel = new AbortController();
    const session = await openMysqlSession(conn, ctx, cancel.signal);
    const thread = session.connection.threadId as number;
    // Minutes of computing that writes nothing until it ends (bounded by the 60 s limit).
    const busy = session.timed(
      queryMysql(session.connection, `SELECT BENCHMARK(20000000000, MD5('x')) AS b`),
    );
    busy.catch(() => {});
    for (let i = 0; i < 100 && !(await running(thread)); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await running(thread)).toBe(true);
    // The abort destroys the session (relational/run-session.ts); a command in flight on a
    // destroyed mysql2 connection is not called back, so only the server is watched here.
    cancel.abort();
    let still = true;
    for (let i = 0; i < 100 && still; i++) {
      await new Promise((r) => setTimeout(r, 50));
      still = await running(thread);
    }
    expect(still).toBe(false);
    await session.close().catch(() => {});
  }, 30_000);
});
