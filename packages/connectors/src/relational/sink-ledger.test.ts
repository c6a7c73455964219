import { randomBytes } from 'node:crypto';
import type { Payload } from '@sluice/engine';
import mysqlDriver from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batches, stepContext } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { mysql, mysqlConfigSchema } from '../mysql/index';
import { postgres, postgresConfigSchema } from '../postgres/index';
import { createSessionPool } from '../session-pool';
import { type ConnectorContext, defaultLimits } from '../types';

// The SQL sinks' commit ledger on the real PostgreSQL and MariaDB: a write under a commit key
// records itself in the same transaction; the same key again writes nothing and answers the
// committed counts; a failed write records nothing; committedWrites sums a step's writes.

const PG_ADMIN = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MY_HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
const MY_PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);
const DB = `sluice_ledger_${randomBytes(4).toString('hex')}`;
const base: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

const rows = (...data: unknown[][][]): Payload => ({
  kind: 'rows',
  columns: [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'text' },
  ],
  batches: batches<unknown[]>(...data),
});
const sink = (table: string) =>
  stepContext({
    kind: 'sink',
    data_source_ref: 'db',
    operation: { operation_type: 'sql', write: { table, mode: 'insert' } },
  });

type Target = {
  name: string;
  definition: typeof postgres | typeof mysql;
  connection: () => any;
  query: (text: string) => Promise<any[]>;
  /** The target table, qualified the way the dialect names a schema or database. */
  table: string;
};

let pgDb: pg.Client;
let myDb: mysqlDriver.Connection;

const targets: Target[] = [
  {
    name: 'postgres',
    definition: postgres,
    connection: () => {
      const u = new URL(PG_ADMIN);
      return {
        config: postgresConfigSchema.parse({
          host: u.hostname,
          port: Number(u.port || 5432),
          database: DB,
          user: 'postgres',
          allow_private_hosts: true,
        }),
        credentials: { password: 'unused' },
      };
    },
    query: async (text) => (await pgDb.query(text)).rows,
    table: 'sales.events',
  },
  {
    name: 'mysql',
    definition: mysql,
    connection: () => ({
      config: mysqlConfigSchema.parse({
        host: MY_HOST,
        port: MY_PORT,
        database: DB,
        user: 'root',
        allow_private_hosts: true,
      }),
      credentials: { password: '' },
    }),
    query: async (text) => (await myDb.query(text))[0] as any[],
    table: 'events',
  },
];

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();
  const u = new URL(PG_ADMIN);
  u.pathname = `/${DB}`;
  pgDb = new pg.Client({ connectionString: u.toString() });
  await pgDb.connect();
  await pgDb.query('CREATE SCHEMA sales');
  await pgDb.query('CREATE TABLE sales.events (id int, name text NOT NULL)');
  myDb = await mysqlDriver.createConnection({ host: MY_HOST, port: MY_PORT, user: 'root' });
  await myDb.query(`CREATE DATABASE ${DB}`);
  await myDb.query(`USE ${DB}`);
  await myDb.query('CREATE TABLE events (id INT, name VARCHAR(50) NOT NULL) ENGINE=InnoDB');
});

afterAll(async () => {
  await pgDb?.end();
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.end();
  await myDb?.query(`DROP DATABASE IF EXISTS ${DB}`);
  await myDb?.end();
});

describe.each(targets)('$name sink ledger', (t) => {
  const write = (key: string, payload: Payload) =>
    t.definition.sink.write(t.connection(), payload, sink(t.table), { ...base, commitKey: key });
  const count = async () => Number((await t.query(`SELECT COUNT(*) AS n FROM ${t.table}`))[0].n);

  it('writes a commit key once: the same key again writes nothing and answers what was committed', async () => {
    const first = await write(
      'run-1:load:0',
      rows(
        [
          [1, 'a'],
          [2, 'b'],
        ],
        [[3, 'c']],
      ),
    );
    expect(first.rows).toBe(3);
    expect(await count()).toBe(3);
    const again = await write(
      'run-1:load:0',
      rows(
        [
          [1, 'a'],
          [2, 'b'],
        ],
        [[3, 'c']],
      ),
    );
    expect(again).toEqual(first);
    expect(await count()).toBe(3);
    // Another write of the same step (a second upstream input) is its own key.
    await write('run-1:load:1', rows([[4, 'd']]));
    expect(await count()).toBe(4);
    const step = sink(t.table).step;
    expect(await t.definition.ledger.committedWrites(t.connection(), step, 'run-1:load:', base)).toEqual({
      rows: 4,
      bytes: expect.any(Number),
    });
    expect(await t.definition.ledger.committedWrites(t.connection(), step, 'run-2:load:', base)).toBeNull();
  });

  it('records nothing when the write rolls back, so the retry writes it', async () => {
    await expect(
      write(
        'run-3:load:0',
        rows([
          [5, 'e'],
          [6, null],
        ]),
      ),
    ).rejects.toMatchObject({
      code: 'QUERY_FAILED',
    });
    expect(await count()).toBe(4);
    await write(
      'run-3:load:0',
      rows([
        [5, 'e'],
        [6, 'f'],
      ]),
    );
    expect(await count()).toBe(6);
  });
});

describe('postgres sink ledger on a pooled session', () => {
  // A session that saw the ledger looks the key up in its first message; a ledger dropped
  // since is found missing, created again, and the write still goes in once.
  const pool = createSessionPool({ maxIdle: 2 });
  const ctx = { ...base, sessions: pool };
  const pgTarget = targets[0];
  const write = (key: string, payload: Payload) =>
    postgres.sink.write(pgTarget.connection(), payload, sink('sales.pooled'), { ...ctx, commitKey: key });
  const count = async () => Number((await pgDb.query('SELECT count(*) AS n FROM sales.pooled')).rows[0].n);
  afterAll(() => pool.close());

  it('writes a key once on a reused session, also after the ledger was dropped', async () => {
    await pgDb.query('CREATE TABLE sales.pooled (id int, name text NOT NULL)');
    expect(await write('pooled-1:load:0', rows([[1, 'a']]))).toMatchObject({ rows: 1 });
    // The same key on the same (reused) session: the first message finds it committed.
    expect(await write('pooled-1:load:0', rows([[1, 'a']]))).toMatchObject({ rows: 1 });
    expect(await count()).toBe(1);
    expect(pool.stats()).toMatchObject({ opened: 1, reused: 1 });
    await pgDb.query('DROP TABLE sales.sluice_sink_commits');
    expect(await write('pooled-2:load:0', rows([[2, 'b']]))).toMatchObject({ rows: 1 });
    expect(await write('pooled-2:load:0', rows([[2, 'b']]))).toMatchObject({ rows: 1 });
    expect(await count()).toBe(2);
    expect(pool.stats()).toMatchObject({ opened: 1, reused: 3 });
    expect(
      (await pgDb.query('SELECT commit_key FROM sales.sluice_sink_commits ORDER BY 1')).rows.map(
        (r) => r.commit_key,
      ),
    ).toEqual(['pooled-2:load:0']);
  });

  it('on a reused session, lifts the statement limit with its first message and copes with a target gone since', async () => {
    // A session that saw the ledger lifts statement_timeout for the COPY in its first message
    // (sink-start.ts); a target dropped since is created in that transaction with the limit
    // set back first, and the transaction always ends with it (the next write sees it again).
    const creating = stepContext({
      kind: 'sink',
      data_source_ref: 'db',
      operation: {
        operation_type: 'sql',
        write: { table: 'sales.lifted', mode: 'insert', create_table: true },
      },
    });
    const to = (key: string, step = sink('sales.lifted')) =>
      postgres.sink.write(pgTarget.connection(), rows([[3, 'c']]), step, { ...ctx, commitKey: key });
    const lifted = async () => Number((await pgDb.query('SELECT count(*) AS n FROM sales.lifted')).rows[0].n);
    await pgDb.query('CREATE TABLE sales.lifted (id int, name text NOT NULL)');
    expect(await to('lift-1:load:0')).toMatchObject({ rows: 1 });
    expect(await to('lift-2:load:0')).toMatchObject({ rows: 1 });
    expect(await to('lift-2:load:0')).toMatchObject({ rows: 1 });
    expect(await lifted()).toBe(2);
    await pgDb.query('DROP TABLE sales.lifted');
    expect(await to('lift-3:load:0', creating)).toMatchObject({ rows: 1 });
    expect(await to('lift-4:load:0')).toMatchObject({ rows: 1 });
    expect(await lifted()).toBe(2);
    // Every write on the one session (none failed, none was closed).
    expect(pool.stats()).toMatchObject({ opened: 1 });
  });
});
