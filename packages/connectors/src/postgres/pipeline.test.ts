import { randomBytes } from 'node:crypto';
import type { Payload } from '@sluice/engine';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batches, chunksOf, collect, stepContext } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import type { PgConnection } from './connect';
import { postgres, postgresConfigSchema } from './index';

// Pipeline read and write on the real PostgreSQL at 127.0.0.1:5432 (trust auth), in a scratch
// database removed afterwards.

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = `sluice_pl_pg_${randomBytes(4).toString('hex')}`;
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

function connection(): PgConnection {
  const admin = new URL(ADMIN_URL);
  return {
    config: postgresConfigSchema.parse({
      host: admin.hostname,
      port: Number(admin.port || 5432),
      database: DB,
      user: 'postgres',
      allow_private_hosts: true,
    }),
    credentials: { password: 'unused' },
  };
}

let db: pg.Client;
const sql = async (text: string, values: unknown[] = []) => (await db.query(text, values)).rows;

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

const TRICKY = 'tab\there\nnew line\r\n"quotes" \'single\' \\backslash\\ \\N ünïcödé 😀, comma';

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${DB}`;
  db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  await db.query(`CREATE TABLE people (id int PRIMARY KEY, name text NOT NULL, city text)`);
  await db.query(`INSERT INTO people VALUES (1, 'ann', 'Oslo'), (2, 'bob', 'Rome'), (3, 'cy', NULL)`);
  await db.query(`CREATE TABLE tricky (
    id int PRIMARY KEY, txt text, js jsonb, arr int[], tags text[], b bytea, ts timestamptz, n numeric, ok boolean)`);
  await db.query('CREATE SCHEMA sales');
  await db.query('CREATE SEQUENCE seq');
});

afterAll(async () => {
  await db?.end();
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.end();
});

describe('postgres read', () => {
  it('streams 100,000 rows in batches fetched as they are read', async () => {
    const step = source(
      `SELECT g AS id, md5(g::text) AS h, clock_timestamp() AS at
         FROM generate_series(1, 100000) g WHERE g > {{runtime.input.min}};`,
      { min: 0 },
    );
    const out = await postgres.source.read(connection(), step, ctx);
    expect(out.payload.kind).toBe('rows');
    if (out.payload.kind !== 'rows') return;
    expect(out.payload.columns).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'h', type: 'text' },
      { name: 'at', type: 'timestamp with time zone' },
    ]);
    let count = 0;
    let n = 0;
    let firstAt = '';
    let lastAt = '';
    for await (const batch of out.payload.batches) {
      n++;
      count += batch.length;
      if (n === 1) firstAt = batch[0][2] as string;
      lastAt = batch[batch.length - 1][2] as string;
      // Downstream is slow on the first batches: the server only computes what is fetched.
      if (n <= 3) await new Promise((r) => setTimeout(r, 100));
    }
    expect(count).toBe(100_000);
    expect(n).toBe(20);
    expect(Date.parse(lastAt) - Date.parse(firstAt)).toBeGreaterThanOrEqual(290);
    expect(await out.nextCursor()).toBeNull();
  });

  it('binds templates as values and reads in a read-only transaction', async () => {
    const out = await postgres.source.read(
      connection(),
      source('SELECT id, name FROM people WHERE name = {{runtime.input.name}} OR id = {{runtime.input.id}}', {
        name: "x' OR '1'='1",
        id: 2,
      }),
      ctx,
    );
    expect((await collect(out.payload)).items).toEqual([[2, 'bob']]);
    const write = await failure(
      postgres.source.read(connection(), source("SELECT nextval('seq')"), ctx),
      'PERMISSION_DENIED',
    );
    expect(write.message).toMatch(/read-only/);
    const cte = await failure(
      postgres.source.read(
        connection(),
        source('WITH d AS (DELETE FROM people RETURNING id) SELECT * FROM d'),
        ctx,
      ),
      'QUERY_FAILED',
    );
    expect(cte.message).toMatch(/data-modifying/);
    expect(await sql('SELECT count(*)::int AS n FROM people')).toEqual([{ n: 3 }]);
    await failure(postgres.source.read(connection(), source('DELETE FROM people'), ctx), 'INVALID_STATEMENT');
    // One statement only, even without parameters: no way out of the read-only transaction.
    await failure(
      postgres.source.read(
        connection(),
        source('SELECT 1; COMMIT; SET default_transaction_read_only = off; DELETE FROM people'),
        ctx,
      ),
      'QUERY_FAILED',
    );
    expect(await sql('SELECT count(*)::int AS n FROM people')).toEqual([{ n: 3 }]);
  });
});

describe('postgres source cursor', () => {
  const tracked = (query: string, cursor: string | null, column = 'changed_at') =>
    stepContext(
      {
        kind: 'source',
        data_source_ref: 'db',
        operation: { operation_type: 'sql', sql: query, cursor_column: column },
      },
      { cursor },
    );
  const QUERY = `SELECT id, changed_at FROM stamps
    WHERE {{runtime.incremental.lower_bound.cursor}}::timestamptz IS NULL
       OR changed_at > {{runtime.incremental.lower_bound.cursor}}::timestamptz
    ORDER BY id DESC`;

  beforeAll(async () => {
    await sql('CREATE TABLE stamps (id int PRIMARY KEY, changed_at timestamptz)');
    // Across the end of daylight saving in Berlin, 2 is later than 1 but its text is smaller:
    // 1 reads 2026-10-25 02:30:00.25+02, 2 reads 2026-10-25 02:10:00+01.
    await sql(`INSERT INTO stamps VALUES
      (1, '2026-10-25 00:30:00.25+00'), (2, '2026-10-25 01:10:00+00'), (3, '2026-10-24 09:00:00+00'), (4, NULL)`);
    await sql(`ALTER DATABASE ${DB} SET timezone = 'Europe/Berlin'`);
  });
  afterAll(() => sql(`ALTER DATABASE ${DB} RESET timezone`));

  it('takes the greatest value of cursor_column as the next cursor, and reads after it next time', async () => {
    const first = await postgres.source.read(connection(), tracked(QUERY, null), ctx);
    expect((await collect(first.payload)).items.map((r: any) => r[0])).toEqual([4, 3, 2, 1]);
    const cursor = await first.nextCursor();
    expect(cursor).toBe('2026-10-25 02:10:00+01');
    const second = await postgres.source.read(connection(), tracked(QUERY, cursor), ctx);
    expect((await collect(second.payload)).items).toEqual([]);
    // No row, no value: the committed cursor stays.
    expect(await second.nextCursor()).toBeNull();
    await sql("INSERT INTO stamps VALUES (5, '2026-10-26 00:00:00+00')");
    const third = await postgres.source.read(connection(), tracked(QUERY, cursor), ctx);
    expect((await collect(third.payload)).items.map((r: any) => r[0])).toEqual([5]);
  });

  it('compares numbers as numbers and refuses a column the result lacks', async () => {
    const out = await postgres.source.read(
      connection(),
      tracked('SELECT * FROM (VALUES (9::bigint), (10::bigint), (NULL)) v(n)', null, 'n'),
      ctx,
    );
    await collect(out.payload);
    expect(await out.nextCursor()).toBe('10');
    const err = await failure(
      postgres.source.read(connection(), tracked('SELECT 1 AS x', null, 'n'), ctx),
      'INVALID_STATEMENT',
    );
    expect(err.message).toContain('cursor_column "n"');
  });
});

describe('postgres write', () => {
  const cols = ['id', 'txt', 'js', 'arr', 'tags', 'b', 'ts', 'n', 'ok'];

  it('inserts tricky values exactly (NULL, quotes, tabs, newlines, backslashes, unicode, JSON, arrays, bytes)', async () => {
    const input = rowsPayload(
      cols,
      [
        [
          1,
          null,
          { a: 'q"uote', n: [1, null] },
          [1, 2],
          ['a,b', 'c"d', null],
          Buffer.from([0, 255, 10]),
          '2024-01-02T03:04:05Z',
          '1.50',
          true,
        ],
        [2, TRICKY, ['x', 1], null, null, null, new Date('2024-05-06T07:08:09.123Z'), 2.5, false],
      ],
      [],
      [
        [3, '', 'null', [], [], Buffer.alloc(0), null, null, null],
        [4, '\\N', null, null, null, null, null, null, null],
      ],
    );
    const result = await postgres.sink.write(connection(), input, sink({ table: 'tricky' }), ctx);
    expect(result.rows).toBe(4);
    expect(result.bytes).toBeGreaterThan(0);
    const rows = await sql(
      `SELECT id, txt, js, arr, tags, encode(b, 'hex') AS b, to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') AS ts, n::text, ok
         FROM tricky ORDER BY id`,
    );
    expect(rows).toEqual([
      {
        id: 1,
        txt: null,
        js: { a: 'q"uote', n: [1, null] },
        arr: [1, 2],
        tags: ['a,b', 'c"d', null],
        b: '00ff0a',
        ts: '2024-01-02 03:04:05.000',
        n: '1.50',
        ok: true,
      },
      {
        id: 2,
        txt: TRICKY,
        js: ['x', 1],
        arr: null,
        tags: null,
        b: null,
        ts: '2024-05-06 07:08:09.123',
        n: '2.5',
        ok: false,
      },
      { id: 3, txt: '', js: null, arr: [], tags: [], b: '', ts: null, n: null, ok: null },
      { id: 4, txt: '\\N', js: null, arr: null, tags: null, b: null, ts: null, n: null, ok: null },
    ]);
  });

  it('upserts (the last row of a key wins) and replaces', async () => {
    await postgres.sink.write(
      connection(),
      rowsPayload(
        ['id', 'name'],
        [
          [2, 'bobby'],
          [4, 'dee'],
        ],
        [[2, 'robert']],
      ),
      sink({ table: 'public.people', mode: 'upsert', key: ['id'] }),
      ctx,
    );
    expect(await sql('SELECT id, name, city FROM people ORDER BY id')).toEqual([
      { id: 1, name: 'ann', city: 'Oslo' },
      { id: 2, name: 'robert', city: 'Rome' },
      { id: 3, name: 'cy', city: null },
      { id: 4, name: 'dee', city: null },
    ]);
    await postgres.sink.write(
      connection(),
      {
        kind: 'csv',
        delimiter: ',',
        header: true,
        chunks: chunksOf('id,name,city\n', '7,"eve, jr.",\n8,fay,"Bern"\n'),
      },
      sink({ table: 'people', mode: 'replace' }),
      ctx,
    );
    expect(await sql('SELECT id, name, city FROM people ORDER BY id')).toEqual([
      { id: 7, name: 'eve, jr.', city: null },
      { id: 8, name: 'fay', city: 'Bern' },
    ]);
  });

  it('commits nothing when a row is rejected', async () => {
    const before = await sql('SELECT * FROM people ORDER BY id');
    // A key violation against existing rows, found after the first batch was staged.
    const dup = await failure(
      postgres.sink.write(
        connection(),
        rowsPayload(['id', 'name'], [[100, 'new']], [[7, 'dup']]),
        sink({ table: 'people' }),
        ctx,
      ),
      'QUERY_FAILED',
    );
    expect(dup.message).toMatch(/duplicate key value violates unique constraint "people_pkey"/);
    // A value the column type refuses: the message does not echo it.
    const bad = await failure(
      postgres.sink.write(
        connection(),
        rowsPayload(['id', 'name'], [[101, 'x']], [['secret-ish-value', 'y']]),
        sink({ table: 'people', mode: 'replace' }),
        ctx,
      ),
      'QUERY_FAILED',
    );
    expect(bad.message).toMatch(/invalid input syntax for type integer/);
    expect(bad.message).not.toContain('secret-ish-value');
    await failure(
      postgres.sink.write(
        connection(),
        rowsPayload(['id', 'name'], [[102, null]]),
        sink({ table: 'people' }),
        ctx,
      ),
      'QUERY_FAILED',
    );
    expect(await sql('SELECT * FROM people ORDER BY id')).toEqual(before);
  });

  it('creates a missing table from JSON records and upserts into it', async () => {
    const json = (records: unknown[]): Payload => ({ kind: 'json', batches: batches<unknown>(records) });
    const write = { table: 'sales.orders_new', mode: 'upsert', key: ['id'], create_table: true };
    await postgres.sink.write(
      connection(),
      json([{ id: 1, 'we"ird col': 'a', meta: { x: [1] }, price: 9.5, paid: true }]),
      sink(write),
      ctx,
    );
    await postgres.sink.write(
      connection(),
      json([{ id: 1, 'we"ird col': 'b', meta: null, price: 10, paid: false }]),
      sink(write),
      ctx,
    );
    expect(
      await sql(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns
          WHERE table_schema = 'sales' AND table_name = 'orders_new' ORDER BY ordinal_position`,
      ),
    ).toEqual([
      { name: 'id', type: 'bigint' },
      { name: 'we"ird col', type: 'text' },
      { name: 'meta', type: 'jsonb' },
      { name: 'price', type: 'double precision' },
      { name: 'paid', type: 'boolean' },
    ]);
    expect(await sql('SELECT * FROM sales.orders_new')).toEqual([
      { id: '1', 'we"ird col': 'b', meta: null, price: 10, paid: false },
    ]);
    const missing = await failure(
      postgres.sink.write(connection(), json([{ id: 1 }]), sink({ table: 'nowhere' }), ctx),
      'QUERY_FAILED',
    );
    expect(missing.message).toMatch(/does not exist; set create_table/);
  });

  it.each([
    'people; DROP TABLE people',
    'people"',
    '"people"',
    'public.people.extra',
    'people --',
    'pg_catalog.pg_class x',
    '',
  ])('refuses the table name %j', async (table) => {
    const step = stepContext({
      kind: 'sink',
      data_source_ref: 'db',
      operation: { operation_type: 'sql', write: { table: table || 'x', mode: 'insert' } },
    });
    if (!table) (step.step.operation as { write: { table: string } }).write.table = '';
    await failure(
      postgres.sink.write(connection(), rowsPayload(['id'], [[1]]), step, ctx),
      'INVALID_STATEMENT',
    );
    expect(await sql(`SELECT to_regclass('people') IS NOT NULL AS ok`)).toEqual([{ ok: true }]);
  });

  it('refuses read-only sources, missing keys and payloads that are not tabular', async () => {
    await failure(
      postgres.sink.write(connection(), rowsPayload(['id'], [[1]]), sink({ table: 'people' }), {
        ...ctx,
        readOnly: true,
      }),
      'PERMISSION_DENIED',
    );
    await failure(
      postgres.sink.write(
        connection(),
        rowsPayload(['id'], [[1]]),
        sink({ table: 'people', mode: 'upsert' }),
        ctx,
      ),
      'INVALID_STATEMENT',
    );
    await failure(
      postgres.sink.write(
        connection(),
        { kind: 'file', mimeType: 'application/pdf', chunks: chunksOf('%PDF') },
        sink({ table: 'people' }),
        ctx,
      ),
      'INVALID_STATEMENT',
    );
    const unknown = await failure(
      postgres.sink.write(
        connection(),
        rowsPayload(['id', 'nope'], [[1, 2]]),
        sink({ table: 'people' }),
        ctx,
      ),
      'QUERY_FAILED',
    );
    expect(unknown.message).toContain('"nope" is not in table people');
  });
});
