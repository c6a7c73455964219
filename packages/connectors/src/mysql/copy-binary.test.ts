import { randomBytes } from 'node:crypto';
import type { Payload } from '@sluice/engine';
import mysqlDriver from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ctx,
  MY_HOST,
  MY_PORT,
  PG_URL,
  peerConnections,
  sqlSink,
  sqlSource,
} from '../../../../test/support/mysql-postgres';
import { postgres } from '../postgres/index';
import { copyBinaryPlan } from './copy-binary-plan';
import { CopyBinaryRows } from './copy-binary-rows';
import { copyTextKinds } from './copy-text-rows';
import { mysql } from './index';
import type { Field } from './operations';

// MySQL/MariaDB rows as PostgreSQL COPY binary for the target's types: the real MariaDB at
// 127.0.0.1:3306 into the real PostgreSQL at 127.0.0.1:5432, once as COPY binary, once as COPY
// text and once by the row path; the three loads must hold the same text in every column.

const id = randomBytes(4).toString('hex');
const MYDB = `sluice_cb_my_${id}`;
const PGDB = `sluice_cb_pg_${id}`;
const { myConnection, pgConnection } = peerConnections(MYDB, PGDB);
const source = sqlSource;
const sink = (table: string, mode = 'insert') =>
  sqlSink(table, { mode, ...(mode === 'upsert' ? { key: ['id'] } : {}) });

let my: mysqlDriver.Connection;
let pgc: pg.Client;

// Every source type COPY binary writes, each into the PostgreSQL types it writes it for.
const COLUMNS = `id int primary key, ti tinyint, tu tinyint unsigned, si smallint, su smallint unsigned,
  mi mediumint, mu mediumint unsigned, i int, iu int unsigned, bi bigint, bu bigint unsigned, yr year,
  d decimal(20,6), dz decimal(65,30), dr decimal(20,6), dt date, dtm datetime(6), dt3 datetime(3),
  dt0 datetime, ts timestamp(6) null, ok boolean, ch char(5), vc varchar(200), tx mediumtext,
  en enum('a','b'), bin varbinary(16), bl blob, n2 int, nd date`;
const PG_COLUMNS = `id int primary key, ti smallint, tu smallint, si smallint, su int, mi int, mu int,
  i int, iu bigint, bi bigint, bu numeric(20), yr smallint, d numeric(20,6), dz numeric, dr numeric(14,2),
  dt date, dtm timestamp, dt3 timestamp(3), dt0 timestamp, ts timestamp, ok boolean, ch char(5),
  vc varchar(200), tx text, en text, bin bytea, bl bytea, n2 numeric, nd timestamp`;
const TRICKY = 'tab\there\nnew line\r\n"quotes" \\backslash\\ \\N \\. ünïcödé 😀, comma';

beforeAll(async () => {
  my = await mysqlDriver.createConnection({ host: MY_HOST, port: MY_PORT, user: 'root' });
  await my.query(`CREATE DATABASE ${MYDB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await my.query(`USE ${MYDB}`);
  await my.query(`CREATE TABLE every (${COLUMNS})`);
  await my.query(
    `INSERT INTO every VALUES
       (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808,
        18446744073709551615, 1901, -12345678901234.123456, -12345678901234567890123456789012345.123456789012345678901234567891,
        1.005, '1000-01-01', '1000-01-01 00:00:00.000001', '9999-12-31 23:59:59.999', '2024-02-29 12:00:00',
        '2038-01-19 03:14:07.999999', true, 'a\\tb', ?, ?, 'b', X'005C090A0D4E00', X'', -7, '2024-02-29'),
       (2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, 2155, 0.000001,
        0.000000000000000000000000000001, -1.005, '9999-12-31', '9999-12-31 23:59:59.999999',
        '1969-12-31 23:59:59.5', '2000-01-01 00:00:00', '1970-01-01 00:00:01', false, '', '', '', 'a', X'',
        X'00', 0, '1970-01-01'),
       (3, 0, 1, -1, 1, -1, 1, -1, 1, -1, 1, 2000, -0.000001, 10000.0001, 123456789012.344999, '2000-02-29',
        '1999-12-31 23:59:59.999999', '2000-01-01 00:00:00.001', '1999-12-31 23:59:59', NULL, false, 'abcde',
        'x', 'y', 'a', X'FF', X'FFFE', 12345678, '1999-12-31'),
       (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       (5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1999, 10000000000000.000000, 0, 0, '1600-03-01',
        '1600-02-29 01:02:03.04', '2300-01-01 00:00:00', '1715-06-01 00:00:00', NULL, true, ' x ', ' x ',
        ?, 'b', X'5C', X'5C78', -100000000, '2285-12-31')`,
    [TRICKY, `${TRICKY}\n`.repeat(2000), 'ü'],
  );
  // Text of every length up to 40 bytes (the encoder copies short text a word at a time), numerics
  // with zero base-10000 digits inside and at either end, times before 1970.
  await my.query(
    `CREATE TABLE seq (id int primary key, v varchar(40), at datetime(6), amount decimal(12,2),
       w varchar(64), n decimal(30,10), old datetime(6))`,
  );
  await my.query(
    `INSERT INTO seq SELECT seq, concat('value ', seq, if(seq % 7 = 0, '\\t\\\\', '')),
       timestamp '2024-01-01 00:00:00' + interval seq second + interval seq microsecond, (seq % 10000) / 100,
       left(repeat(concat(seq, if(seq % 5 = 0, 'ü', '-')), 40), seq % 41),
       (cast(seq as signed) - 15000) * 10000.00000001 / if(seq % 3 = 0, 10000, 1),
       timestamp '1969-12-31 23:59:59' - interval seq minute - interval seq * 7 microsecond
       FROM seq_1_to_30000`,
  );
  await my.query('CREATE TABLE flags (id int primary key, b tinyint)');
  await my.query('INSERT INTO flags VALUES (1, 1), (2, 2)');
  await my.query('CREATE TABLE zero (id int primary key, dt date, dtm datetime)');
  await my.query("INSERT INTO zero VALUES (1, '2024-01-01', '0000-00-00 00:00:00')");

  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${PGDB}`);
  await admin.end();
  const u = new URL(PG_URL);
  u.pathname = `/${PGDB}`;
  pgc = new pg.Client({ connectionString: u.toString() });
  await pgc.connect();
  for (const way of ['binary', 'text', 'rows']) {
    await pgc.query(`CREATE TABLE every_${way} (${PG_COLUMNS})`);
    await pgc.query(
      `CREATE TABLE seq_${way} (id int primary key, v text, at timestamp, amount numeric(12,2), w text,
         n numeric(30,10), old timestamp)`,
    );
  }
  await pgc.query('CREATE TABLE flags (id int primary key, b boolean)');
  await pgc.query('CREATE TABLE zero (id int primary key, dt date, dtm timestamp)');
  await pgc.query('CREATE TABLE short (id int primary key, v varchar(5))');
});

afterAll(async () => {
  await my?.query(`DROP DATABASE IF EXISTS ${MYDB}`);
  await my?.end();
  await pgc?.end();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${PGDB} WITH (FORCE)`);
  await admin.end();
});

type Rows = Extract<Payload, { kind: 'rows' }>;
const log = (s: { lines: { message: string }[] }) => s.lines.map((l) => l.message).join('\n');

/** Loads `sql` into `table` as COPY binary, COPY text (binary not offered) or rows only. */
async function load(sql: string, table: string, way: 'binary' | 'text' | 'rows', mode = 'insert') {
  const out = await mysql.source.read(myConnection(), source(sql), ctx);
  const p = out.payload as Rows;
  const { asBinary: _, ...textOnly } = p.csv!;
  const payload = way === 'binary' ? p : way === 'text' ? { ...p, csv: textOnly } : { ...p, csv: undefined };
  const s = sink(table, mode);
  const result = await postgres.sink.write(pgConnection(), payload, s, ctx);
  return { result, log: log(s) };
}

/** Every row's text, column by column, in id order. */
const texts = async (table: string) =>
  (await pgc.query({ text: `SELECT t.* FROM ${table} t ORDER BY id`, rowMode: 'array' })).rows.map((r) =>
    r.map((v: unknown) => (v === null ? null : Buffer.isBuffer(v) ? v.toString('hex') : String(v))),
  );
const asText = async (table: string) =>
  (await pgc.query(`SELECT t::text AS t FROM ${table} t ORDER BY id`)).rows.map((r) => r.t as string);

describe('COPY binary from MySQL rows', () => {
  it('lands every type as COPY text and the row path land it', async () => {
    for (const table of ['every', 'seq']) {
      const binary = await load(`SELECT * FROM ${table}`, `${table}_binary`, 'binary');
      expect(binary.log).toMatch(/as COPY binary directly/);
      const text = await load(`SELECT * FROM ${table}`, `${table}_text`, 'text');
      expect(text.log).toMatch(/as COPY text directly/);
      await load(`SELECT * FROM ${table}`, `${table}_rows`, 'rows');
      expect(binary.result.rows).toBe(table === 'every' ? 5 : 30_000);
      const expected = await asText(`${table}_text`);
      expect(await asText(`${table}_binary`)).toEqual(expected);
      expect(await asText(`${table}_rows`)).toEqual(expected);
      expect(await texts(`${table}_binary`)).toEqual(await texts(`${table}_text`));
    }
    // Spot checks that the text above is what MariaDB holds.
    const r = await pgc.query(
      'SELECT bi::text, bu::text, dz::text, dr::text, dtm::text, dt3::text, vc, bin, ch FROM every_binary WHERE id = 1',
    );
    expect(r.rows[0]).toEqual({
      bi: '-9223372036854775808',
      bu: '18446744073709551615',
      dz: '-12345678901234567890123456789012345.123456789012345678901234567891',
      dr: '1.01',
      dtm: '1000-01-01 00:00:00.000001',
      dt3: '9999-12-31 23:59:59.999',
      vc: TRICKY,
      bin: Buffer.from([0, 0x5c, 9, 0x0a, 0x0d, 0x4e, 0]),
      ch: 'a\tb  ',
    });
  });

  it('goes through staging for upsert the same way', async () => {
    await pgc.query('TRUNCATE seq_binary');
    const a = await load('SELECT * FROM seq WHERE id <= 100', 'seq_binary', 'binary', 'upsert');
    expect(a.log).toMatch(/as COPY binary directly/);
    const b = await load('SELECT * FROM seq', 'seq_binary', 'binary', 'upsert');
    expect(b.result.rows).toBe(30_000);
    expect(await asText('seq_binary')).toEqual(await asText('seq_text'));
  });

  it('says which columns keep COPY text', async () => {
    const plan = async (sql: string, targets: string[]) => {
      const [, fields] = await my.query(sql);
      const kinds = copyTextKinds(fields as unknown as Field[]);
      if ('reason' in kinds) throw new Error(kinds.reason);
      const oids = await pgc.query(`SELECT unnest($1::regtype[])::oid::int AS oid`, [targets]);
      return copyBinaryPlan(
        fields as unknown as Field[],
        kinds.kinds,
        oids.rows.map((o, i) => ({ oid: o.oid, name: targets[i] })),
      );
    };
    expect(await plan('SELECT bu FROM every', ['bigint'])).toEqual({
      reason: 'column bu goes into bigint, which COPY binary does not write from this type',
    });
    expect(await plan('SELECT iu FROM every', ['integer'])).toHaveProperty('reason');
    expect(await plan('SELECT d FROM every', ['integer'])).toHaveProperty('reason');
    expect(await plan('SELECT dtm FROM every', ['timestamptz'])).toHaveProperty('reason');
    expect(await plan('SELECT bin FROM every', ['text'])).toHaveProperty('reason');
    expect(
      await plan('SELECT id, CAST(1.5 AS DOUBLE) AS f FROM every', ['integer', 'double precision']),
    ).toHaveProperty('reason');
    expect(await plan('SELECT iu, dtm, bin FROM every', ['bigint', 'timestamp', 'bytea'])).toHaveProperty(
      'codes',
    );
    const out = await mysql.source.read(myConnection(), source('SELECT id, bu AS big FROM every'), ctx);
    await pgc.query('CREATE TABLE narrow (id int primary key, big bigint)');
    const s = sink('narrow');
    await expect(postgres.sink.write(pgConnection(), out.payload, s, ctx)).rejects.toMatchObject({
      code: 'QUERY_FAILED',
    });
    expect(log(s)).toMatch(/stay COPY text: column big goes into bigint/);
  });

  it('fails where PostgreSQL refuses the text, and loads nothing', async () => {
    for (const [sql, table] of [
      ['SELECT * FROM flags', 'flags'],
      ['SELECT * FROM zero', 'zero'],
      ["SELECT id, 'abcdef' AS v FROM flags WHERE id = 1", 'short'],
    ]) {
      for (const way of ['binary', 'text'] as const) {
        const err = await load(sql, table, way).then(
          () => null,
          (e) => e,
        );
        expect(err?.code).toBe('QUERY_FAILED');
        expect(err?.message).not.toContain('0000-00-00');
        expect((await pgc.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
      }
    }
  });

  it('follows cursor_column through COPY binary', async () => {
    const step = source('SELECT id, v FROM seq WHERE id <= 100', { cursor_column: 'id' });
    const out = await mysql.source.read(myConnection(), step, ctx);
    const csv = (out.payload as Rows).csv!;
    expect(
      csv.asBinary?.([
        { oid: 23, name: 'integer' },
        { oid: 25, name: 'text' },
      ]),
    ).toBeNull();
    let bytes = 0;
    for await (const c of csv.chunks) bytes += c.byteLength;
    expect(bytes).toBeGreaterThan(19);
    expect(csv.count()).toBe(100);
    expect(await out.nextCursor()).toBe('100');
  });

  it('writes the same bytes from mysql2 rows as from the wire', async () => {
    const sql = 'SELECT * FROM every ORDER BY id';
    const [rows, fields] = await my.query({
      sql,
      rowsAsArray: true,
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
    });
    const kinds = copyTextKinds(fields as unknown as Field[]);
    if ('reason' in kinds) throw new Error(kinds.reason);
    const targets = await pgc.query(
      `SELECT a.atttypid::int AS oid, format_type(a.atttypid, a.atttypmod) AS name FROM pg_attribute a
        WHERE a.attrelid = 'every_binary'::regclass AND a.attnum > 0 ORDER BY a.attnum`,
    );
    const plan = copyBinaryPlan(fields as unknown as Field[], kinds.kinds, targets.rows);
    if ('reason' in plan) throw new Error(plan.reason);
    const chunks: Buffer[] = [];
    const enc = new CopyBinaryRows(plan.codes, [], (c) => chunks.push(c), 64);
    for (const row of rows as unknown[][]) enc.values(row);
    enc.finish();
    const out = await mysql.source.read(myConnection(), source(sql), ctx);
    const csv = (out.payload as Rows).csv!;
    expect(csv.asBinary?.(targets.rows)).toBeNull();
    const wire: Buffer[] = [];
    for await (const c of csv.chunks) wire.push(Buffer.from(c));
    expect(Buffer.concat(chunks).equals(Buffer.concat(wire))).toBe(true);
  });
});
