import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { egressPolicy } from '../egress';
import type { SqlPayload } from '../relational/rows';
import { type ConnectorContext, ConnectorError, defaultLimits, type QueryResult } from '../types';
import type { PgConnection } from './connect';
import { postgres, postgresConfigSchema } from './index';

// Runs against the real PostgreSQL on 127.0.0.1:5432 (trust auth) and, for password checks,
// a throwaway cluster switched to scram-sha-256. Unreachable servers fail these tests.

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const suffix = randomBytes(4).toString('hex');
const DB = `sluice_ct_pg_${suffix}`;

const open: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

function connection(config: Record<string, unknown> = {}, password = 'unused'): PgConnection {
  const admin = new URL(ADMIN_URL);
  return {
    config: postgresConfigSchema.parse({
      host: admin.hostname,
      port: Number(admin.port || 5432),
      database: DB,
      user: 'postgres',
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

async function admin<T>(database: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
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
  (await postgres.query.execute(connection(config), { type: 'sql', sql }, parameters, ctx)) as QueryResult & {
    payload: SqlPayload;
  };

beforeAll(async () => {
  await admin('postgres', (c) => c.query(`CREATE DATABASE ${DB}`));
  await admin(DB, async (c) => {
    await c.query('CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL)');
    await c.query("INSERT INTO t VALUES (1, 'alpha'), (2, 'beta'), (3, 'gamma')");
    await c.query('CREATE TABLE inj (v text)');
    await c.query('CREATE SCHEMA sales');
    await c.query('CREATE TABLE sales.orders (id bigint, total numeric(10,2), tags text[], at timestamptz)');
  });
});

afterAll(async () => {
  await admin('postgres', (c) => c.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`));
});

describe('postgres test connection', () => {
  it('connects and runs SELECT 1', async () => {
    await expect(postgres.test(connection(), open)).resolves.toBeUndefined();
  });

  it('names an unknown database', async () => {
    const err = await failure(postgres.test(connection({ database: `nope_${suffix}` }), open));
    expect(err.code).toBe('CONNECTION_FAILED');
    expect(err.message).toContain(`database nope_${suffix} does not exist`);
  });
});

describe('postgres schema import', () => {
  it('lists tables and columns of every non-system schema', async () => {
    const doc = await postgres.discover.importSchema(connection(), open);
    expect(doc.schema_type).toBe('relational');
    if (doc.schema_type !== 'relational') return;
    expect(doc.type).toBe('postgres');
    expect(doc.tables).toContainEqual({
      schema: 'public',
      name: 't',
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'text' },
      ],
    });
    expect(doc.tables).toContainEqual({
      schema: 'sales',
      name: 'orders',
      columns: [
        { name: 'id', type: 'bigint' },
        { name: 'total', type: 'numeric' },
        { name: 'tags', type: 'text[]' },
        { name: 'at', type: 'timestamp with time zone' },
      ],
    });
    expect(doc.tables.some((t) => t.schema === 'pg_catalog' || t.schema === 'information_schema')).toBe(
      false,
    );
  });
});

describe('postgres execute', () => {
  it('binds {{name}} placeholders and describes the columns', async () => {
    const r = await exec('SELECT id, name FROM t WHERE name <> {{skip}} AND id >= {{min}} ORDER BY id', {
      skip: 'beta',
      min: 1,
    });
    expect(r).toEqual({
      result_type: 'sql',
      payload: {
        columns: [
          { name: 'id', type: 'integer' },
          { name: 'name', type: 'text' },
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
      'SELECT {{o}}::jsonb -> {{k}} AS a, {{arr}}::jsonb ->> 1 AS second, {{n}}::int + 1 AS n, {{b}}::boolean AS b, {{z}}::text IS NULL AS z',
      { o: { a: { deep: [1, 2] } }, k: 'a', arr: ['x', 'y'], n: 41, b: true, z: null },
    );
    expect(r.payload.rows).toEqual([[{ deep: [1, 2] }, 'y', 42, true, true]]);
  });

  it('uses one parameter for a placeholder repeated in the statement', async () => {
    const r = await exec('SELECT {{v}}::text = {{v}}::text AS same, {{v}}::text AS v', { v: 'x' });
    expect(r.payload.rows).toEqual([[true, 'x']]);
  });

  it('rejects a placeholder without a value, raw positional markers and quoted placeholders', async () => {
    expect((await failure(exec('SELECT {{missing}}'))).code).toBe('INVALID_STATEMENT');
    expect((await failure(exec('SELECT $1', {}))).code).toBe('INVALID_STATEMENT');
    expect((await failure(exec("SELECT '{{v}}'", { v: 'x' }))).code).toBe('INVALID_STATEMENT');
    expect(postgres.query.statementSchema.safeParse({ type: 'sql', sql: "SELECT '{{v}}'" }).success).toBe(
      false,
    );
    expect(postgres.query.statementSchema.safeParse({ type: 'sql', sql: 'SELECT {{v}}' }).success).toBe(true);
    // Text that only looks like a marker inside quotes, comments or dollar quotes is left alone.
    const r = await exec("SELECT '$1 ?' AS a, $$ {x} $2 $$ AS b -- $3 {{not_a_param}}\n", {});
    expect(r.payload.rows).toEqual([['$1 ?', ' {x} $2 ']]);
  });

  const payloads = [
    "'; DROP TABLE t; --",
    '1 OR 1=1',
    "' OR '1'='1",
    '$1',
    '?',
    '\\',
    "\\'; DROP TABLE t; --",
    "E'\\x27; DROP TABLE t; --",
    '\u2018 OR \u20181\u2019=\u20191',
    '\u02bc; DROP TABLE t; --',
    '{{other}}',
    '$$; DROP TABLE t; $$',
    '"; DROP TABLE t; --',
  ];

  it('treats SQL injection payloads as literal values', async () => {
    for (const v of payloads) {
      const r = await exec('INSERT INTO inj (v) VALUES ({{v}}) RETURNING v, {{other}}::text AS other', {
        v,
        other: 'o',
      });
      expect(r.payload.rows).toEqual([[v, 'o']]);
      const found = await exec('SELECT count(*)::int FROM t WHERE name = {{v}}', { v });
      expect(found.payload.rows).toEqual([[0]]);
    }
    await admin(DB, async (c) => {
      expect((await c.query('SELECT count(*)::int AS n FROM t')).rows[0].n).toBe(3);
      expect((await c.query('SELECT v FROM inj ORDER BY v')).rows.map((r) => r.v).sort()).toEqual(
        [...payloads].sort(),
      );
    });
  });

  it('runs exactly one statement', async () => {
    const err = await failure(exec('SELECT 1; DROP TABLE t'));
    expect(err.code).toBe('QUERY_FAILED');
    expect(err.message).toContain('multiple commands');
    await admin(DB, async (c) => {
      expect((await c.query("SELECT to_regclass('public.t') AS t")).rows[0].t).toBe('t');
    });
  });

  it('reports INSERT counts', async () => {
    const r = await exec("INSERT INTO inj (v) SELECT 'n' || g FROM generate_series(1, 3) g");
    expect(r.payload).toMatchObject({ command: 'INSERT', affected_rows: 3, rows: [], columns: [] });
    expect(r.row_count).toBe(0);
  });

  it('stops reading at maxRows without fetching the rest', async () => {
    const started = Date.now();
    const r = await exec(
      "SELECT g, repeat('x', 100) FROM generate_series(1, 2000000) g",
      {},
      {
        ...open,
        limits: { ...defaultLimits, maxRows: 10 },
      },
    );
    expect(r.truncated).toBe(true);
    expect(r.row_count).toBe(10);
    expect(r.payload.rows).toHaveLength(10);
    expect(r.payload.rows[9][0]).toBe(10);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('stops at maxResultBytes', async () => {
    const r = await exec(
      "SELECT g, repeat('x', 1000) FROM generate_series(1, 100) g",
      {},
      {
        ...open,
        limits: { ...defaultLimits, maxResultBytes: 10_000 },
      },
    );
    expect(r.truncated).toBe(true);
    expect(r.row_count).toBeGreaterThan(5);
    expect(r.row_count).toBeLessThan(10);
    expect(Buffer.byteLength(JSON.stringify(r.payload.rows))).toBeLessThanOrEqual(10_000);
  });

  it('keeps exact and temporal values as text', async () => {
    const r = await exec(
      "SELECT 9007199254740993::bigint AS big, 1.10::numeric AS n, timestamp '2024-01-02 03:04:05' AS ts, '\\x0102'::bytea AS b",
    );
    expect(r.payload.rows).toEqual([['9007199254740993', '1.10', '2024-01-02 03:04:05', '\\x0102']]);
    expect(r.payload.columns.map((c) => c.type)).toEqual([
      'bigint',
      'numeric',
      'timestamp without time zone',
      'bytea',
    ]);
  });

  it('cancels a statement after statement_timeout_seconds', async () => {
    const err = await failure(exec('SELECT pg_sleep(5)', {}, open, { statement_timeout_seconds: 1 }));
    expect(err.code).toBe('TIMEOUT');
  });

  it('reports a server error without the parameter values', async () => {
    const err = await failure(exec('SELECT {{v}}::int', { v: 'secret-value-xyz' }));
    expect(err.code).toBe('QUERY_FAILED');
    expect(err.message).toContain('invalid input syntax');
    expect(err.message).not.toContain('secret-value-xyz');
  });

  it('cannot write through a read-only data source', async () => {
    const ro = { ...open, readOnly: true };
    for (const sql of [
      "INSERT INTO t VALUES (9, 'x')",
      'DROP TABLE t',
      'UPDATE t SET name = {{v}}',
      'CREATE TABLE t2 (a int)',
    ]) {
      const err = await failure(exec(sql, { v: 'z' }, ro));
      expect(err.code).toBe('PERMISSION_DENIED');
    }
    const r = await exec('SELECT count(*)::int FROM t', {}, ro);
    expect(r.payload.rows).toEqual([[3]]);
    await admin(DB, async (c) => {
      expect((await c.query("SELECT to_regclass('public.t2') AS t")).rows[0].t).toBeNull();
    });
  });
});
