import { randomBytes } from 'node:crypto';
import mysqlDriver from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { egressPolicy } from '../egress';
import type { SqlPayload } from '../relational/rows';
import { type ConnectorContext, ConnectorError, defaultLimits, type QueryResult } from '../types';
import type { MysqlConnection } from './connect';
import { mysql, mysqlConfigSchema } from './index';

// Runs against the real MariaDB on 127.0.0.1:3306 (root without a password): a scratch
// database and a dedicated user with a password, both removed afterwards. Unreachable
// servers fail these tests.

const HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
const PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);
const suffix = randomBytes(4).toString('hex');
const DB = `sluice_ct_my_${suffix}`;
const USER = `sluice_t_${suffix}`;
const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;

const open: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

function connection(config: Record<string, unknown> = {}, password = PASSWORD): MysqlConnection {
  return {
    config: mysqlConfigSchema.parse({
      host: HOST,
      port: PORT,
      database: DB,
      user: USER,
      allow_private_hosts: true,
      ...config,
    }),
    credentials: { password },
  };
}

async function failure(p: Promise<unknown>): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  return err as ConnectorError;
}

async function admin<T>(work: (c: mysqlDriver.Connection) => Promise<T>): Promise<T> {
  const c = await mysqlDriver.createConnection({ host: HOST, port: PORT, user: 'root' });
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

const exec = async (
  sql: string,
  parameters: Record<string, unknown> = {},
  ctx: ConnectorContext = open,
  config = {},
) =>
  (await mysql.query.execute(connection(config), { type: 'sql', sql }, parameters, ctx)) as QueryResult & {
    payload: SqlPayload;
  };

beforeAll(async () => {
  await admin(async (c) => {
    await c.query(`CREATE DATABASE ${DB}`);
    await c.query(`CREATE USER '${USER}'@'127.0.0.1' IDENTIFIED BY '${PASSWORD}'`);
    await c.query(`GRANT ALL ON ${DB}.* TO '${USER}'@'127.0.0.1'`);
    await c.query(`CREATE TABLE ${DB}.t (id int PRIMARY KEY, name varchar(100) NOT NULL)`);
    await c.query(`INSERT INTO ${DB}.t VALUES (1, 'alpha'), (2, 'beta'), (3, 'gamma')`);
    await c.query(`CREATE TABLE ${DB}.inj (v text)`);
    await c.query(`CREATE TABLE ${DB}.d (n int)`);
    await c.query(
      `INSERT INTO ${DB}.d WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 100) SELECT n FROM s`,
    );
  });
});

afterAll(async () => {
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${DB}`);
    await c.query(`DROP USER IF EXISTS '${USER}'@'127.0.0.1'`);
  });
});

describe('mysql test connection', () => {
  it('connects and runs SELECT 1', async () => {
    await expect(mysql.test(connection(), open)).resolves.toBeUndefined();
  });

  it('names an unknown database', async () => {
    const err = await failure(mysql.test(connection({ user: 'root', database: `nope_${suffix}` }, ''), open));
    expect(err.code).toBe('CONNECTION_FAILED');
    expect(err.message).toContain(`database nope_${suffix} does not exist`);
  });
});

describe('mysql schema import', () => {
  it('lists the tables and columns of the configured database', async () => {
    const doc = await mysql.discover.importSchema(connection(), open);
    expect(doc.schema_type).toBe('relational');
    if (doc.schema_type !== 'relational') return;
    expect(doc.type).toBe('mysql');
    expect(doc.tables.map((t) => t.name)).toEqual(['d', 'inj', 't']);
    expect(doc.tables.find((t) => t.name === 't')).toEqual({
      schema: DB,
      name: 't',
      columns: [
        { name: 'id', type: 'int(11)' },
        { name: 'name', type: 'varchar(100)' },
      ],
    });
  });
});

describe('mysql execute', () => {
  it('binds {{name}} placeholders and describes the columns', async () => {
    const r = await exec('SELECT id, name FROM t WHERE name <> {{skip}} AND id >= {{min}} ORDER BY id', {
      skip: 'beta',
      min: 1,
    });
    expect(r).toEqual({
      result_type: 'sql',
      payload: {
        columns: [
          { name: 'id', type: 'int' },
          { name: 'name', type: 'varchar' },
        ],
        rows: [
          [1, 'alpha'],
          [3, 'gamma'],
        ],
        command: 'SELECT',
        affected_rows: null,
      },
      row_count: 2,
      truncated: false,
    });
  });

  it('binds values of every JSON type (objects and arrays as JSON text)', async () => {
    const r = await exec(
      "SELECT JSON_VALUE({{o}}, '$.a.deep[1]') AS deep, JSON_VALUE({{arr}}, '$[1]') AS second, {{n}} + 1 AS n, {{b}} AS b, {{z}} IS NULL AS z, {{v}} = {{v}} AS same",
      { o: { a: { deep: [1, 2] } }, arr: ['x', 'y'], n: 41, b: true, z: null, v: 'x' },
    );
    expect(r.payload.rows).toEqual([['2', 'y', 42, 1, 1, 1]]);
  });

  it('rejects a placeholder without a value, raw ? markers and quoted placeholders', async () => {
    expect((await failure(exec('SELECT {{missing}}'))).code).toBe('INVALID_STATEMENT');
    expect((await failure(exec('SELECT ?'))).code).toBe('INVALID_STATEMENT');
    expect((await failure(exec("SELECT '{{v}}'", { v: 'x' }))).code).toBe('INVALID_STATEMENT');
    expect(mysql.query.statementSchema.safeParse({ type: 'sql', sql: 'SELECT `{{v}}`' }).success).toBe(false);
    const r = await exec("SELECT '? \\' ?' AS a, \"?\" AS b # {{not_a_param}} ?\n", {});
    expect(r.payload.rows).toEqual([["? ' ?", '?']]);
  });

  const payloads = [
    "'; DROP TABLE t; --",
    '1 OR 1=1',
    "' OR '1'='1",
    '$1',
    '?',
    '\\',
    "\\'; DROP TABLE t; -- ",
    "\\\\'; DROP TABLE t; #",
    '\u2018 OR \u20181\u2019=\u20191',
    '\u02bc; DROP TABLE t; --',
    '\uff07; DROP TABLE t; --',
    '{{other}}',
    '"; DROP TABLE t; --',
    '`; DROP TABLE t; --',
    '/*!50000 DROP TABLE t */',
  ];

  it('treats SQL injection payloads as literal values', async () => {
    for (const v of payloads) {
      const ins = await exec('INSERT INTO inj (v) VALUES ({{v}})', { v, other: 'o' });
      expect(ins.payload).toMatchObject({ command: 'INSERT', affected_rows: 1 });
      const echo = await exec('SELECT {{v}} AS v, {{other}} AS other', { v, other: 'o' });
      expect(echo.payload.rows).toEqual([[v, 'o']]);
      const found = await exec('SELECT count(*) FROM t WHERE name = {{v}}', { v });
      expect(found.payload.rows).toEqual([['0']]);
    }
    await admin(async (c) => {
      const [count] = await c.query<any[]>(`SELECT count(*) AS n FROM ${DB}.t`);
      expect(Number(count[0].n)).toBe(3);
      const [rows] = await c.query<any[]>(`SELECT v FROM ${DB}.inj`);
      expect(rows.map((r) => r.v).sort()).toEqual([...payloads].sort());
    });
  });

  it('runs exactly one statement', async () => {
    const err = await failure(exec('SELECT 1; DROP TABLE t'));
    expect(err.code).toBe('QUERY_FAILED');
    const r = await exec('SELECT count(*) FROM t');
    expect(r.payload.rows).toEqual([['3']]);
  });

  it('reads JSON columns', async () => {
    const r = await exec(`SELECT JSON_OBJECT('a', 1) AS j`);
    expect(r.payload.rows).toEqual([[{ a: 1 }]]);
    expect(r.payload.columns).toEqual([{ name: 'j', type: 'json' }]);
  });

  it('stops reading at maxRows without fetching the rest', async () => {
    const started = Date.now();
    const r = await exec(
      "SELECT a.n, b.n, c.n, REPEAT('x', 100) FROM d a, d b, d c",
      {},
      {
        ...open,
        limits: { ...defaultLimits, maxRows: 10 },
      },
    );
    expect(r.truncated).toBe(true);
    expect(r.row_count).toBe(10);
    expect(r.payload.rows).toHaveLength(10);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('stops at maxResultBytes', async () => {
    const r = await exec(
      "SELECT n, REPEAT('x', 1000) FROM d ORDER BY n",
      {},
      {
        ...open,
        limits: { ...defaultLimits, maxResultBytes: 10_000 },
      },
    );
    expect(r.truncated).toBe(true);
    expect(r.row_count).toBeGreaterThan(5);
    expect(r.row_count).toBeLessThan(10);
  });

  it('keeps exact and temporal values as text', async () => {
    const r = await exec(
      "SELECT CAST(9007199254740993 AS SIGNED) AS big, CAST(1.10 AS DECIMAL(5,2)) AS n, CAST('2024-01-02 03:04:05' AS DATETIME) AS ts, X'0102' AS b",
    );
    expect(r.payload.rows).toEqual([['9007199254740993', '1.10', '2024-01-02 03:04:05', '0x0102']]);
    expect(r.payload.columns.map((c) => c.type)).toEqual(['bigint', 'decimal', 'datetime', 'varbinary']);
  });

  it('cancels a statement after statement_timeout_seconds', async () => {
    const started = Date.now();
    const err = await failure(
      exec('SELECT SLEEP(5) FROM d WHERE n = 1', {}, open, { statement_timeout_seconds: 1 }),
    );
    expect(err.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(4500);
  });

  it('reports a server error without the parameter values', async () => {
    const err = await failure(
      exec('SELECT * FROM t WHERE {{v}} = missing_column', { v: 'secret-value-xyz' }),
    );
    expect(err.code).toBe('QUERY_FAILED');
    expect(err.message).toContain('missing_column');
    expect(err.message).not.toContain('secret-value-xyz');
  });

  it('cannot write through a read-only data source', async () => {
    const ro = { ...open, readOnly: true };
    for (const sql of [
      "INSERT INTO t VALUES (9, 'x')",
      'UPDATE t SET name = {{v}}',
      'DROP TABLE t',
      'CREATE TABLE t2 (a int)',
    ]) {
      const err = await failure(exec(sql, { v: 'z' }, ro));
      expect(err.code).toBe('PERMISSION_DENIED');
    }
    const r = await exec('SELECT count(*) FROM t', {}, ro);
    expect(r.payload.rows).toEqual([['3']]);
    await admin(async (c) => {
      const [tables] = await c.query<any[]>(`SHOW TABLES FROM ${DB}`);
      expect(tables.map((row) => Object.values(row)[0]).sort()).toEqual(['d', 'inj', 't']);
    });
  });
});
