import { randomBytes } from 'node:crypto';
import type { Payload } from '@sluice/engine';
import mysqlDriver from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batches, chunksOf, collect, stepContext } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import type { MysqlConnection } from './connect';
import { mysql, mysqlConfigSchema } from './index';

// Pipeline read and write on the real MariaDB at 127.0.0.1:3306 (root without a password),
// in a scratch database removed afterwards.

const HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
const PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);
const DB = `sluice_pl_my_${randomBytes(4).toString('hex')}`;
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

const connection = (): MysqlConnection => ({
  config: mysqlConfigSchema.parse({
    host: HOST,
    port: PORT,
    database: DB,
    user: 'root',
    allow_private_hosts: true,
  }),
  credentials: { password: '' },
});

let db: mysqlDriver.Connection;
const sql = async (text: string, values: unknown[] = []) => (await db.query(text, values))[0] as any[];

const source = (query: string, input: Record<string, unknown> = {}) =>
  stepContext(
    { kind: 'source', data_source_ref: 'db', operation: { operation_type: 'sql', sql: query } },
    { scope: { runtime: { input } } },
  );
const sink = (write: Record<string, unknown>) =>
  stepContext({ kind: 'sink', data_source_ref: 'db', operation: { operation_type: 'sql', write } });

async function failure(p: Promise<unknown>, code: string): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(ConnectorError);
  expect(err.code).toBe(code);
  return err as ConnectorError;
}

const rowsPayload = (columns: string[], ...data: unknown[][][]): Payload => ({
  kind: 'rows',
  columns: columns.map((name) => ({ name, type: 'text' })),
  batches: batches<unknown[]>(...data),
});

const TRICKY = 'tab\there\nnew line\r\n"quotes" \'single\' \\backslash\\ \\N `tick` ünïcödé 😀, comma';

beforeAll(async () => {
  db = await mysqlDriver.createConnection({ host: HOST, port: PORT, user: 'root', dateStrings: true });
  await db.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await db.query(`USE ${DB}`);
  await db.query(
    'CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, city VARCHAR(100)) ENGINE=InnoDB',
  );
  await db.query(`INSERT INTO people VALUES (1, 'ann', 'Oslo'), (2, 'bob', 'Rome'), (3, 'cy', NULL)`);
  await db.query(
    'CREATE TABLE tricky (id INT PRIMARY KEY, txt TEXT, js JSON, b BLOB, ts DATETIME(3), n DECIMAL(10,2), ok BOOLEAN) ENGINE=InnoDB',
  );
  await db.query('CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(255)) ENGINE=InnoDB');
});

afterAll(async () => {
  await db?.query(`DROP DATABASE IF EXISTS ${DB}`);
  await db?.end();
});

describe('mysql pipelines', () => {
  it('loads 100,000 rows in batched multi-row inserts', async () => {
    const pad = 'x'.repeat(200);
    async function* generated() {
      for (let start = 0; start < 100_000; start += 5000) {
        yield Array.from({ length: 5000 }, (_, i) => [start + i + 1, pad]);
      }
    }
    const result = await mysql.sink.write(
      connection(),
      {
        kind: 'rows',
        columns: [
          { name: 'id', type: 'integer' },
          { name: 'pad', type: 'text' },
        ],
        batches: generated(),
      },
      sink({ table: 'big' }),
      ctx,
    );
    expect(result.rows).toBe(100_000);
    expect(await sql('SELECT COUNT(*) AS n, MAX(id) AS m FROM big')).toEqual([{ n: 100_000, m: 100_000 }]);
  });

  it('streams 100,000 rows with backpressure: the server waits while a batch is downstream', async () => {
    const out = await mysql.source.read(
      connection(),
      source('SELECT id, pad, SYSDATE(6) AS at FROM big WHERE id > {{runtime.input.min}} ORDER BY id', {
        min: 0,
      }),
      ctx,
    );
    if (out.payload.kind !== 'rows') throw new Error('rows expected');
    expect(out.payload.columns.map((c) => c.name)).toEqual(['id', 'pad', 'at']);
    expect(out.payload.columns[0].type).toBe('int');
    const time = (s: string) => Date.parse(s.replace(' ', 'T').slice(0, 23));
    let n = 0;
    let count = 0;
    let firstAt = 0;
    let lastAt = 0;
    for await (const batch of out.payload.batches) {
      n++;
      count += batch.length;
      if (n === 1) firstAt = time(batch[0][2] as string);
      lastAt = time(batch[batch.length - 1][2] as string);
      if (n <= 3) await new Promise((r) => setTimeout(r, 150));
    }
    expect(count).toBe(100_000);
    expect(n).toBe(20);
    expect(lastAt - firstAt).toBeGreaterThanOrEqual(300);
    expect(await out.nextCursor()).toBeNull();
  });

  it('takes the greatest cursor_column value as the next cursor and reads after it', async () => {
    const step = (cursor: string | null) =>
      stepContext(
        {
          kind: 'source',
          data_source_ref: 'db',
          operation: {
            operation_type: 'sql',
            sql: 'SELECT id, name FROM people WHERE {{runtime.incremental.lower_bound.cursor}} IS NULL OR id > {{runtime.incremental.lower_bound.cursor}} ORDER BY name DESC',
            cursor_column: 'id',
          },
        },
        { cursor },
      );
    const first = await mysql.source.read(connection(), step(null), ctx);
    expect((await collect(first.payload)).items).toHaveLength(3);
    expect(await first.nextCursor()).toBe('3');
    const second = await mysql.source.read(connection(), step('3'), ctx);
    expect((await collect(second.payload)).items).toEqual([]);
    expect(await second.nextCursor()).toBeNull();
  });

  it('binds templates as values and only runs queries', async () => {
    const out = await mysql.source.read(
      connection(),
      source('SELECT id, name FROM people WHERE name = {{runtime.input.name}} OR id = {{runtime.input.id}}', {
        name: "x' OR '1'='1",
        id: 2,
      }),
      ctx,
    );
    expect((await collect(out.payload)).items).toEqual([[2, 'bob']]);
    await failure(mysql.source.read(connection(), source('DELETE FROM people'), ctx), 'INVALID_STATEMENT');
    await failure(
      mysql.source.read(connection(), source('SELECT 1; DELETE FROM people'), ctx),
      'QUERY_FAILED',
    );
    expect(await sql('SELECT COUNT(*) AS n FROM people')).toEqual([{ n: 3 }]);
  });

  it('reads in one statement on a read-only session: no transaction around it, and no write inside it', async () => {
    // Every statement text this process's mysql2 connections send, for the length of the read.
    // The connections' class, shared with the connector's (one mysql2): this test's own is one.
    const Base = Object.getPrototypeOf((db as unknown as { connection: object }).connection) as Record<
      'query' | 'execute',
      (this: unknown, ...a: unknown[]) => unknown
    >;
    const sent: string[] = [];
    const originals = { query: Base.query, execute: Base.execute };
    for (const name of ['query', 'execute'] as const) {
      Base[name] = function (this: unknown, ...a: unknown[]) {
        const q = a[0] as string | { sql?: string };
        sent.push(typeof q === 'string' ? q : (q?.sql ?? ''));
        return originals[name].apply(this, a);
      };
    }
    try {
      const out = await mysql.source.read(connection(), source('SELECT id FROM people ORDER BY id'), ctx);
      expect((await collect(out.payload)).items).toEqual([[1], [2], [3]]);
      expect(sent.some((t) => t.includes('ORDER BY id'))).toBe(true);
      expect(sent.filter((t) => /^\s*(START TRANSACTION|BEGIN|COMMIT|ROLLBACK)\b/i.test(t))).toEqual([]);
    } finally {
      Object.assign(Base, originals);
    }
    // A function that writes, called by a source's SELECT: the session's READ ONLY refuses it.
    await sql(`CREATE FUNCTION ${DB}.sneaky() RETURNS INT MODIFIES SQL DATA
      BEGIN INSERT INTO ${DB}.people (id, name) VALUES (99, 'sneak'); RETURN 1; END`);
    await failure(mysql.source.read(connection(), source('SELECT sneaky() AS s'), ctx), 'PERMISSION_DENIED');
    expect(await sql(`SELECT COUNT(*) AS n FROM ${DB}.people`)).toEqual([{ n: 3 }]);
  });

  it('inserts tricky values exactly', async () => {
    const result = await mysql.sink.write(
      connection(),
      rowsPayload(
        ['id', 'txt', 'js', 'b', 'ts', 'n', 'ok'],
        [
          [
            1,
            null,
            { a: 'q"uote', n: [1, null] },
            Buffer.from([0, 255, 10, 39]),
            new Date('2024-01-02T03:04:05.678Z'),
            '1.50',
            true,
          ],
          [2, TRICKY, ['x', 1], null, '2024-05-06 07:08:09', 2.5, false],
        ],
        [[3, '', null, Buffer.alloc(0), null, null, null]],
      ),
      sink({ table: 'tricky' }),
      ctx,
    );
    expect(result.rows).toBe(3);
    const rows = await sql('SELECT id, txt, js, HEX(b) AS b, ts, n, ok FROM tricky ORDER BY id');
    const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
    expect(rows.map((r) => ({ ...r, js: json(r.js) }))).toEqual([
      {
        id: 1,
        txt: null,
        js: { a: 'q"uote', n: [1, null] },
        b: '00FF0A27',
        ts: '2024-01-02 03:04:05.678',
        n: '1.50',
        ok: 1,
      },
      { id: 2, txt: TRICKY, js: ['x', 1], b: null, ts: '2024-05-06 07:08:09.000', n: '2.50', ok: 0 },
      { id: 3, txt: '', js: null, b: '', ts: null, n: null, ok: null },
    ]);
  });

  it('stores zoned timestamp text as its UTC instant in DATETIME and TIMESTAMP columns', async () => {
    await sql('CREATE TABLE stamps (id INT PRIMARY KEY, dt DATETIME(6), ts TIMESTAMP(6) NULL) ENGINE=InnoDB');
    await mysql.sink.write(
      connection(),
      rowsPayload(
        ['id', 'dt', 'ts'],
        [
          [1, '2026-01-02 03:04:05.123456+02', '2026-01-02T03:04:05.5-01:00'],
          [2, '2026-06-30 23:59:59', null],
        ],
      ),
      sink({ table: 'stamps' }),
      ctx,
    );
    await db.query("SET time_zone = '+00:00'");
    const rows = await sql('SELECT id, dt, ts FROM stamps ORDER BY id');
    expect(rows).toEqual([
      { id: 1, dt: '2026-01-02 01:04:05.123456', ts: '2026-01-02 04:04:05.500000' },
      { id: 2, dt: '2026-06-30 23:59:59.000000', ts: null },
    ]);
  });

  it('upserts (the last row of a key wins) and replaces', async () => {
    await mysql.sink.write(
      connection(),
      rowsPayload(
        ['id', 'name'],
        [
          [2, 'bobby'],
          [4, 'dee'],
        ],
        [[2, 'robert']],
      ),
      sink({ table: `${DB}.people`, mode: 'upsert', key: ['id'] }),
      ctx,
    );
    expect(await sql('SELECT id, name, city FROM people ORDER BY id')).toEqual([
      { id: 1, name: 'ann', city: 'Oslo' },
      { id: 2, name: 'robert', city: 'Rome' },
      { id: 3, name: 'cy', city: null },
      { id: 4, name: 'dee', city: null },
    ]);
    await mysql.sink.write(
      connection(),
      {
        kind: 'csv',
        delimiter: ',',
        header: true,
        chunks: chunksOf('id,name,city\n7,"eve, jr.",\n8,fay,Bern\n'),
      },
      sink({ table: 'people', mode: 'replace' }),
      ctx,
    );
    expect(await sql('SELECT id, name, city FROM people ORDER BY id')).toEqual([
      { id: 7, name: 'eve, jr.', city: null },
      { id: 8, name: 'fay', city: 'Bern' },
    ]);
  });

  it('commits nothing when a row is rejected, even after earlier inserts succeeded', async () => {
    const before = await sql('SELECT * FROM people ORDER BY id');
    const many = Array.from({ length: 1500 }, (_, i) => [1000 + i, `p${i}`]);
    // The duplicate lands in the second INSERT statement, after the DELETE and the first one.
    many.push([1000, 'dup']);
    const dup = await failure(
      mysql.sink.write(
        connection(),
        rowsPayload(['id', 'name'], many),
        sink({ table: 'people', mode: 'replace' }),
        ctx,
      ),
      'QUERY_FAILED',
    );
    expect(dup.message).toMatch(/Duplicate entry for key/);
    expect(dup.message).not.toContain("'1000'");
    const bad = await failure(
      mysql.sink.write(
        connection(),
        rowsPayload(['id', 'name'], [[101, 'x']], [['secret-ish-value', 'y']]),
        sink({ table: 'people' }),
        ctx,
      ),
      'QUERY_FAILED',
    );
    expect(bad.message).toMatch(/Incorrect integer value/);
    expect(bad.message).not.toContain('secret-ish-value');
    expect(await sql('SELECT * FROM people ORDER BY id')).toEqual(before);
  });

  it('creates a missing table from JSON records and upserts into it', async () => {
    const json = (records: unknown[]): Payload => ({ kind: 'json', batches: batches<unknown>(records) });
    const write = { table: 'orders_new', mode: 'upsert', key: ['code'], create_table: true };
    await mysql.sink.write(
      connection(),
      json([{ code: 'A-1', 'we`ird col': 'a', meta: { x: [1] }, price: 9.5, paid: true, qty: 3 }]),
      sink(write),
      ctx,
    );
    await mysql.sink.write(
      connection(),
      json([{ code: 'A-1', 'we`ird col': 'b', meta: null, price: 10, paid: false, qty: 4 }]),
      sink(write),
      ctx,
    );
    const types = await sql(
      `SELECT COLUMN_NAME AS name, DATA_TYPE AS type, COLUMN_KEY AS k FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'orders_new' ORDER BY ORDINAL_POSITION`,
      [DB],
    );
    expect(types.map((t) => `${t.name}:${t.type}${t.k ? `:${t.k}` : ''}`)).toEqual([
      'code:varchar:PRI',
      'we`ird col:longtext',
      'meta:longtext',
      'price:double',
      'paid:tinyint',
      'qty:bigint',
    ]);
    expect(await sql('SELECT * FROM orders_new')).toEqual([
      { code: 'A-1', 'we`ird col': 'b', meta: null, price: 10, paid: 0, qty: 4 },
    ]);
    const missing = await failure(
      mysql.sink.write(connection(), json([{ id: 1 }]), sink({ table: 'nowhere' }), ctx),
      'QUERY_FAILED',
    );
    expect(missing.message).toMatch(/does not exist; set create_table/);
  });

  it.each(['people; DROP TABLE people', 'people`', '`people`', 'a.b.c', 'people --', "people' OR '1"])(
    'refuses the table name %j',
    async (table) => {
      await failure(
        mysql.sink.write(connection(), rowsPayload(['id'], [[1]]), sink({ table }), ctx),
        'INVALID_STATEMENT',
      );
      expect(await sql('SELECT COUNT(*) AS n FROM people')).toEqual([{ n: 2 }]);
    },
  );

  it('refuses read-only sources and unknown columns', async () => {
    await failure(
      mysql.sink.write(connection(), rowsPayload(['id'], [[1]]), sink({ table: 'people' }), {
        ...ctx,
        readOnly: true,
      }),
      'PERMISSION_DENIED',
    );
    const unknown = await failure(
      mysql.sink.write(connection(), rowsPayload(['id', 'nope'], [[1, 2]]), sink({ table: 'people' }), ctx),
      'QUERY_FAILED',
    );
    expect(unknown.message).toContain('"nope" is not in table people');
  });
});
