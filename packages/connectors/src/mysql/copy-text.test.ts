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
import { BYTES, CopyTextRows, copyTextKinds, PLAIN, TEXT } from './copy-text-rows';
import { mysql } from './index';
import type { Field } from './operations';

// MySQL/MariaDB rows as COPY text: the encoder on its own, then the real MariaDB at
// 127.0.0.1:3306 into the real PostgreSQL at 127.0.0.1:5432, once as COPY text and once by the
// row path, which must land the same rows.

const id = randomBytes(4).toString('hex');
const MYDB = `sluice_ct_my_${id}`;
const PGDB = `sluice_ct_pg_${id}`;
const { myConnection, pgConnection } = peerConnections(MYDB, PGDB);
const source = sqlSource;
const sink = (table: string) => sqlSink(table);

let my: mysqlDriver.Connection;
let pgc: pg.Client;

const COLUMNS = `id int primary key, ti tinyint, si smallint, mi mediumint, bi bigint, ub bigint unsigned,
  d decimal(20,6), f float, dbl double, yr year, dt date, dtm datetime(6), ts timestamp(3) null, tm time(6),
  bt bit(10), bin varbinary(16), bl blob, ch char(5), vc varchar(200), tx mediumtext, en enum('a','b'),
  st set('x','y'), ok boolean`;
const PG_COLUMNS = `id int primary key, ti smallint, si smallint, mi int, bi bigint, ub numeric(20),
  d numeric(20,6), f real, dbl double precision, yr int, dt date, dtm timestamp, ts timestamp, tm time,
  bt bytea, bin bytea, bl bytea, ch text, vc text, tx text, en text, st text, ok boolean`;
const TRICKY = 'tab\there\nnew line\r\n"quotes" \'single\' \\backslash\\ \\N \\. ünïcödé 😀, comma';

beforeAll(async () => {
  // mysql2 as the source's connection sets it up (connect.ts).
  my = await mysqlDriver.createConnection({
    host: MY_HOST,
    port: MY_PORT,
    user: 'root',
    charset: 'utf8mb4_unicode_ci',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
  await my.query(`CREATE DATABASE ${MYDB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await my.query(`USE ${MYDB}`);
  await my.query(`CREATE TABLE every (${COLUMNS})`);
  await my.query(
    `INSERT INTO every VALUES
       (1, -128, -32768, -8388608, -9223372036854775808, 18446744073709551615, -12345678901234.123456,
        1.5e38, -1.25e-300, 2024, '2024-02-29', '2024-02-29 23:59:59.999999', '2038-01-19 03:14:07.999',
        '12:30:00.5', b'1010101010', X'005C090A0D4E', X'5C4E', 'a\tb', ?, ?, 'b', 'x,y', true),
       (2, 127, 32767, 8388607, 9223372036854775807, 0, 0.000001, -0.5, 0.1, 1901, '1000-01-01',
        '1000-01-01 00:00:00', '1970-01-01 00:00:01', '00:00:00', b'0', X'', '', '', '', '', 'a', '', false),
       (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        NULL, NULL, NULL, NULL, NULL, NULL)`,
    [TRICKY, `${TRICKY}\n`.repeat(2000)],
  );
  await my.query('CREATE TABLE seq (id int primary key, v varchar(40))');
  await my.query(
    "INSERT INTO seq SELECT seq, concat('value ', seq, if(seq % 7 = 0, '\\t\\\\', '')) FROM seq_1_to_30000",
  );
  await my.query('CREATE TABLE zero (id int primary key, dt date, dtm datetime)');
  await my.query("INSERT INTO zero VALUES (1, '0000-00-00', '0000-00-00 00:00:00')");

  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${PGDB}`);
  await admin.end();
  const u = new URL(PG_URL);
  u.pathname = `/${PGDB}`;
  pgc = new pg.Client({ connectionString: u.toString() });
  await pgc.connect();
  await pgc.query(`CREATE TABLE every_text (${PG_COLUMNS})`);
  await pgc.query(`CREATE TABLE every_rows (${PG_COLUMNS})`);
  await pgc.query('CREATE TABLE seq_text (id int primary key, v text)');
  await pgc.query('CREATE TABLE seq_rows (id int primary key, v text)');
  await pgc.query('CREATE TABLE floats (id int primary key, f text, dbl text)');
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

async function text(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const all: Buffer[] = [];
  for await (const c of chunks) all.push(Buffer.from(c));
  return Buffer.concat(all).toString('utf8');
}

/** The result's COPY text from mysql2's rows, through the encoder's fallback entry. */
async function fromRows(sql: string): Promise<string> {
  const [rows, fields] = await my.query({ sql, rowsAsArray: true });
  const kinds = copyTextKinds(fields as unknown as Field[]);
  if ('reason' in kinds) throw new Error(kinds.reason);
  const chunks: Buffer[] = [];
  const enc = new CopyTextRows(kinds.kinds, (c) => chunks.push(c), 64);
  for (const row of rows as unknown[][]) enc.values(row);
  enc.flush();
  return Buffer.concat(chunks).toString('utf8');
}

/** The payload without its COPY binary offer (copy-binary.test.ts tests that). */
function textOnly(payload: Payload): Payload {
  const p = payload as Extract<Payload, { kind: 'rows' }>;
  const { asBinary: _, ...csv } = p.csv!;
  return { ...p, csv };
}

/** Where `every` has its FLOAT and DOUBLE columns. */
const FLOATS = [7, 8];

describe('COPY text from MySQL rows', () => {
  it('escapes text, writes bytes as bytea hex and NULL as \\N', () => {
    const chunks: Buffer[] = [];
    const enc = new CopyTextRows([PLAIN, TEXT, BYTES, TEXT], (c) => chunks.push(c), 8);
    enc.values([42, 'a\tb\nc\rd\\e', Buffer.from([0x00, 0x5c, 0x09, 0x0a, 0xff]), null]);
    enc.values(['2024-01-01 00:00:00.5', '', Buffer.alloc(0), 'ü😀']);
    enc.flush();
    expect(Buffer.concat(chunks).toString('utf8')).toBe(
      '42\ta\\tb\\nc\\rd\\\\e\t\\\\x005c090aff\t\\N\n2024-01-01 00:00:00.5\t\t\\\\x\tü😀\n',
    );
    expect(enc.rows).toBe(2);
  });

  it('decodes length-encoded values of every size and NULL from a row packet', () => {
    const long = Buffer.alloc(70_000, 0x61);
    const mid = Buffer.alloc(300, 0x62);
    const packet = Buffer.concat([
      Buffer.from([0xfb]),
      Buffer.from([0x02, 0x31, 0x32]),
      Buffer.from([0xfc, 300 & 0xff, 300 >> 8]),
      mid,
      Buffer.from([0xfd, 70_000 & 0xff, (70_000 >> 8) & 0xff, 70_000 >> 16]),
      long,
    ]);
    const chunks: Buffer[] = [];
    const enc = new CopyTextRows([TEXT, PLAIN, TEXT, TEXT], (c) => chunks.push(c), 1024);
    enc.packet(packet, 0, packet.length);
    enc.flush();
    expect(Buffer.concat(chunks).toString()).toBe(`\\N\t12\t${'b'.repeat(300)}\t${'a'.repeat(70_000)}\n`);
    expect(() => enc.packet(packet, 0, packet.length - 1)).toThrow(/ended inside a value/);
  });

  it('says which columns keep the row path', async () => {
    const kindsOf = async (sql: string) => {
      const [, fields] = await my.query(sql);
      return copyTextKinds(fields as unknown as Field[]);
    };
    expect(await kindsOf("SELECT JSON_OBJECT('a', 1) AS j")).toEqual({ reason: 'column j is JSON' });
    expect(await kindsOf('SELECT POINT(1, 2) AS p')).toEqual({ reason: 'column p is a geometry' });
    expect(await kindsOf('SELECT NULL AS n')).toEqual({ reason: 'column n has type NULL' });
    expect(await kindsOf('SELECT id, bin, bt, tx, dtm FROM every')).toEqual({
      kinds: [PLAIN, BYTES, BYTES, TEXT, PLAIN],
    });
  });

  it('writes the same text from the wire as from mysql2 rows, for every type', async () => {
    const counts: Record<string, number> = {
      'SELECT * FROM every ORDER BY id': 3,
      'SELECT * FROM zero': 1,
      // Plain rows and, every 7th, rows with values to escape; every 3rd a NULL.
      'SELECT id, v, id * 2 AS twice, IF(id % 3 = 0, NULL, id) AS n FROM seq WHERE id <= 2000 ORDER BY id': 2000,
      'SELECT id, v, id * 2 AS twice FROM seq ORDER BY id': 30_000,
    };
    for (const [sql, count] of Object.entries(counts)) {
      const out = await mysql.source.read(myConnection(), source(sql), ctx);
      const p = out.payload as Extract<Payload, { kind: 'rows' }>;
      expect(p.csv?.format).toBe('text');
      // Floating-point numbers are the same number, spelled by the server or by JavaScript.
      const cells = (t: string) =>
        t
          .split('\n')
          .map((line) => line.split('\t').map((v, i) => (FLOATS.includes(i) && v !== '\\N' ? Number(v) : v)));
      const wire = await text(p.csv!.chunks);
      expect(cells(wire)).toEqual(cells(await fromRows(sql)));
      expect(p.csv!.count()).toBe(count);
    }
    const out = await mysql.source.read(myConnection(), source('SELECT * FROM every WHERE id = 1'), ctx);
    const line = (await text((out.payload as Extract<Payload, { kind: 'rows' }>).csv!.chunks)).split('\t');
    expect(line.slice(0, 9)).toEqual([
      '1',
      '-128',
      '-32768',
      '-8388608',
      '-9223372036854775808',
      '18446744073709551615',
      '-12345678901234.123456',
      '1.5e38',
      '-1.25e-300',
    ]);
    expect(line.slice(14, 20)).toEqual([
      '\\\\x02aa',
      '\\\\x005c090a0d4e',
      '\\\\x5c4e',
      'a\\tb',
      expect.any(String),
      expect.any(String),
    ]);
  });

  it('lands the same rows in PostgreSQL as COPY text as by the row path', async () => {
    for (const [from, to] of [
      ['every', 'every'],
      ['seq', 'seq'],
    ]) {
      const viaText = await mysql.source.read(myConnection(), source(`SELECT * FROM ${from}`), ctx);
      const textSink = sink(`${to}_text`);
      const a = await postgres.sink.write(pgConnection(), textOnly(viaText.payload), textSink, ctx);
      expect(textSink.lines.map((l) => l.message).join('\n')).toMatch(/as COPY text directly/);
      const viaRows = await mysql.source.read(myConnection(), source(`SELECT * FROM ${from}`), ctx);
      const { csv: _, ...rowsOnly } = viaRows.payload as Extract<Payload, { kind: 'rows' }>;
      const rowSink = sink(`${to}_rows`);
      const b = await postgres.sink.write(pgConnection(), rowsOnly, rowSink, ctx);
      expect(rowSink.lines.map((l) => l.message).join('\n')).not.toMatch(/COPY text/);
      expect(a.rows).toBe(b.rows);
      const diff = await pgc.query(
        `SELECT count(*)::int AS n FROM ((TABLE ${to}_text EXCEPT ALL TABLE ${to}_rows) UNION ALL
                                     (TABLE ${to}_rows EXCEPT ALL TABLE ${to}_text)) d`,
      );
      expect(diff.rows[0].n).toBe(0);
    }
    expect((await pgc.query('SELECT count(*)::int AS n FROM seq_text')).rows[0].n).toBe(30_000);
    const r = await pgc.query('SELECT vc, bin, f, dtm::text FROM every_text WHERE id = 1');
    expect(r.rows[0]).toEqual({
      vc: TRICKY,
      bin: Buffer.from([0, 0x5c, 9, 0x0a, 0x0d, 0x4e]),
      f: 1.5e38,
      dtm: '2024-02-29 23:59:59.999999',
    });
    expect((await pgc.query('SELECT count(*)::int AS n FROM every_text WHERE ti IS NULL')).rows[0].n).toBe(1);
  });

  it('keeps the row path for JSON, templates, and floats into text columns, and says why', async () => {
    const json = source("SELECT id, JSON_OBJECT('a', id) AS j FROM every");
    const a = await mysql.source.read(myConnection(), json, ctx);
    expect((a.payload as Extract<Payload, { kind: 'rows' }>).csv).toBeUndefined();
    expect(json.lines.map((l) => l.message)).toContain('rows are not offered as COPY text: column j is JSON');
    for await (const _ of (a.payload as Extract<Payload, { kind: 'rows' }>).batches);

    const floats = await mysql.source.read(
      myConnection(),
      source('SELECT id, f, dbl FROM every WHERE id = 1'),
      ctx,
    );
    const s = sink('floats');
    await postgres.sink.write(pgConnection(), floats.payload, s, ctx);
    expect(s.lines.map((l) => l.message).join('\n')).toMatch(
      /one by one: column f is text and its values are float/,
    );
    expect((await pgc.query('SELECT f, dbl FROM floats')).rows).toEqual([
      { f: '1.5e+38', dbl: '-1.25e-300' },
    ]);
  });

  it('streams COPY text with backpressure: the server waits while chunks are downstream', async () => {
    const out = await mysql.source.read(
      myConnection(),
      source("SELECT seq AS id, REPEAT('x', 200) AS pad, SYSDATE(6) AS at FROM seq_1_to_100000"),
      ctx,
    );
    const csv = (out.payload as Extract<Payload, { kind: 'rows' }>).csv!;
    const time = (line: string) => Date.parse(line.split('\t')[2].replace(' ', 'T').slice(0, 23));
    let first = '';
    let last = '';
    let n = 0;
    for await (const chunk of csv.chunks) {
      const lines = Buffer.from(chunk).toString().split('\n');
      if (n++ === 0) first = lines[0];
      last = lines[lines.length - 2];
      if (n <= 2) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(csv.count()).toBe(100_000);
    // Without the pause the server would be done long before the consumer's two seconds.
    expect(time(last) - time(first)).toBeGreaterThanOrEqual(1500);
  });

  it('fails a zero date the way the row path does, and loads nothing', async () => {
    await pgc.query('CREATE TABLE zero (id int primary key, dt date, dtm timestamp)');
    const codes: string[] = [];
    for (const text of [true, false]) {
      const out = await mysql.source.read(myConnection(), source('SELECT * FROM zero'), ctx);
      const p = out.payload as Extract<Payload, { kind: 'rows' }>;
      const payload = text ? textOnly(p) : { ...p, csv: undefined };
      const err = await postgres.sink.write(pgConnection(), payload, sink('zero'), ctx).then(
        () => null,
        (e) => e,
      );
      codes.push(err?.code);
      expect(err?.message).not.toContain('0000-00-00');
    }
    expect(codes).toEqual(['QUERY_FAILED', 'QUERY_FAILED']);
    expect((await pgc.query('SELECT count(*)::int AS n FROM zero')).rows[0].n).toBe(0);
  });

  it('follows cursor_column through COPY text', async () => {
    const step = source('SELECT id, v FROM seq WHERE id <= 100', { cursor_column: 'id' });
    const out = await mysql.source.read(myConnection(), step, ctx);
    await text((out.payload as Extract<Payload, { kind: 'rows' }>).csv!.chunks);
    expect(await out.nextCursor()).toBe('100');
  });
});
