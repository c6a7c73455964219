import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type mysqlDriver from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MariadbServer, startMariadbServer } from '../../../../../test/peers/mariadb-server';
import { collect, stepContext } from '../../../../../test/support/step-context';
import { egressPolicy } from '../../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../../types';
import type { MysqlConnection } from '../connect';
import { mysql, mysqlConfigSchema, mysqlLag } from '../index';
import { parseCheckpoint } from './position';
import { readMysqlChanges } from './read';

// The binlog capture against a MariaDB server this suite starts itself (binlog on, ROW, FULL
// images), so it can restart it and purge its binlogs: docs/connectors/mysql.md "Change data capture".

const DB = 'shop';
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
let server: MariadbServer;
let db: mysqlDriver.Connection;

let user = { name: 'root', password: '' };

const connection = (): MysqlConnection => ({
  config: mysqlConfigSchema.parse({
    host: '127.0.0.1',
    port: server.port,
    database: DB,
    user: user.name,
    allow_private_hosts: true,
  }),
  credentials: { password: user.password },
});

const sql = async (text: string, values: unknown[] = []) => (await db.query(text, values))[0] as any;

type Op = { tables: string[]; snapshot?: 'initial' | 'never'; max_changes?: number; max_seconds?: number };

/** One run: the change rows as objects and the checkpoint to commit. */
async function read(op: Op, cursor: string | null) {
  const step = stepContext(
    { kind: 'source', data_source_ref: 'db', operation: { operation_type: 'cdc', ...op } },
    { cursor },
  );
  const out = await mysql.changes.read(connection(), step, 'sluice_test', ctx);
  if (out.payload.kind !== 'rows') throw new Error('rows expected');
  const names = out.payload.columns.map((c) => c.name);
  const { items } = await collect(out.payload);
  const rows = (items as unknown[][]).map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])));
  return { rows, cursor: (await out.nextCursor()) as string, columns: names };
}

/** Reads until a run returns nothing, committing each run's checkpoint. */
async function drain(op: Op, cursor: string | null) {
  const runs: Record<string, unknown>[][] = [];
  for (let i = 0; i < 100; i++) {
    const r = await read(op, cursor);
    cursor = r.cursor;
    if (r.rows.length === 0 && parseCheckpoint(cursor).phase === 'stream') break;
    runs.push(r.rows);
  }
  return { runs, cursor };
}

async function failure(p: Promise<unknown>): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  return err as ConnectorError;
}

/** Applies change rows by key (what a sink in apply mode does), refusing impossible ones. */
function apply(target: Map<string, Record<string, unknown>>, rows: Record<string, unknown>[], key = 'id') {
  for (const r of rows) {
    const k = String(r[key]);
    if (r._op === 'truncate') {
      target.clear();
    } else if (r._op === 'insert') {
      expect(target.has(k), `insert of existing key ${k}`).toBe(false);
      target.set(k, r);
    } else if (r._op === 'update') {
      expect(target.has(k), `update of missing key ${k}`).toBe(true);
      target.set(k, r);
    } else {
      expect(target.has(k), `delete of missing key ${k}`).toBe(true);
      target.delete(k);
    }
  }
}

beforeAll(async () => {
  server = await startMariadbServer();
  db = await server.connect();
  await sql(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4`);
  await sql(`USE ${DB}`);
});

afterAll(async () => {
  await db?.end();
  await server?.destroy();
});

describe('mysql changes: check', () => {
  it('refuses a table without a primary key and a missing one, naming the table and the fix', async () => {
    await sql('CREATE TABLE nokey (a INT, b TEXT)');
    await sql('CREATE TABLE keyed (id INT PRIMARY KEY)');
    const findings = await mysql.changes.check(
      connection(),
      {
        operation_type: 'cdc',
        tables: ['shop.nokey', 'keyed', 'shop.ghost'],
        snapshot: 'initial',
        max_changes: 10,
        max_seconds: 10,
      },
      ctx,
    );
    expect(findings).toEqual([
      expect.objectContaining({ table: 'shop.nokey', code: 'CDC_TABLE_NO_KEY' }),
      expect.objectContaining({ table: 'shop.ghost', code: 'CDC_TABLE_NOT_FOUND' }),
    ]);
    expect(findings[0].message).toMatch(/ALTER TABLE shop\.nokey ADD PRIMARY KEY/);
    const err = await failure(read({ tables: ['shop.nokey'] }, null));
    expect(err.message).toMatch(/shop\.nokey has no primary key/);
  });

  it('refuses a server whose binlog is not row-based with full images, naming the setting', async () => {
    const op = {
      operation_type: 'cdc' as const,
      tables: ['shop.keyed'],
      snapshot: 'initial' as const,
      max_changes: 10,
      max_seconds: 10,
    };
    try {
      await sql("SET GLOBAL binlog_format = 'MIXED'");
      await sql("SET GLOBAL binlog_row_image = 'MINIMAL'");
      const findings = await mysql.changes.check(connection(), op, ctx);
      expect(findings.map((f) => f.code)).toEqual(['CDC_SERVER_SETTING', 'CDC_SERVER_SETTING']);
      expect(findings[0].message).toMatch(/binlog_format=ROW/);
      expect(findings[1].message).toMatch(/binlog_row_image=FULL/);
      expect((await failure(read({ tables: ['shop.keyed'] }, null))).message).toMatch(/binlog_format/);
    } finally {
      await sql("SET GLOBAL binlog_format = 'ROW'");
      await sql("SET GLOBAL binlog_row_image = 'FULL'");
    }
    expect(await mysql.changes.check(connection(), op, ctx)).toEqual([]);
  });
});

describe('mysql changes: reads', () => {
  it('hands on inserts, updates and deletes exactly, with exact types, in commit order', async () => {
    await sql(`CREATE TABLE typed (
      id BIGINT UNSIGNED PRIMARY KEY, amount DECIMAL(30,10), at DATETIME(6), ts TIMESTAMP(6) NULL,
      doc JSON, raw VARBINARY(16), fixed BINARY(4), small TINYINT UNSIGNED, note TEXT, flag BIT(3))`);
    const start = await read({ tables: ['shop.typed'], snapshot: 'never' }, null);
    expect(start.rows).toEqual([]);
    const big = '18446744073709551615';
    await sql('INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, b?)', [
      big,
      '-12345678901234567890.0123456789',
      '2024-01-02 03:04:05.123456',
      '2024-06-30 23:59:59.000001',
      '{"a": [1, 2.50, "x"], "n": 12345678901234567890}',
      Buffer.from([0, 255, 16]),
      Buffer.from([7, 0, 0, 0]),
      255,
      'héllo 😀',
      '101',
    ]);
    await sql('START TRANSACTION');
    await sql("UPDATE typed SET note = 'second' WHERE id = ?", [big]);
    await sql("INSERT INTO typed (id, note) VALUES (1, 'one')");
    await sql('COMMIT');
    await sql('DELETE FROM typed WHERE id = ?', [big]);
    const r = await read({ tables: ['shop.typed'] }, start.cursor);
    expect(r.columns.slice(0, 5)).toEqual(['_op', '_table', '_position', '_committed_at', '_unchanged']);
    expect(r.rows.map((x) => [x._op, x.id, x.note])).toEqual([
      ['insert', big, 'héllo 😀'],
      ['update', big, 'second'],
      ['insert', '1', 'one'],
      ['delete', big, 'second'],
    ]);
    // The snapshot's own reading of the same row: the change row carries the same values.
    await sql("UPDATE typed SET note = 'x' WHERE id = 1");
    const [selected] = await sql('SELECT * FROM typed WHERE id = 1');
    const inserted = r.rows[0];
    expect(inserted).toMatchObject({
      _table: 'shop.typed',
      amount: '-12345678901234567890.0123456789',
      at: '2024-01-02 03:04:05.123456',
      doc: '{"a": [1, 2.50, "x"], "n": 12345678901234567890}',
      small: 255,
      _unchanged: null,
    });
    expect(inserted.raw).toEqual(Buffer.from([0, 255, 16]));
    expect(inserted.fixed).toEqual(Buffer.from([7, 0, 0, 0]));
    expect(inserted.flag).toEqual(Buffer.from([5]));
    // TIMESTAMP in UTC: the server's session zone is the machine's, the change row's is UTC.
    const [{ utc }] = await sql(
      "SELECT DATE_FORMAT(CONVERT_TZ(TIMESTAMP('2024-06-30 23:59:59.000001'), @@session.time_zone, '+00:00'), '%Y-%m-%d %H:%i:%s.%f') AS utc",
    );
    expect(inserted.ts).toBe(utc);
    expect(Object.keys(selected).every((k) => k in inserted)).toBe(true);
    // A snapshot reads the very values the stream hands on, column for column.
    await sql(
      'INSERT INTO typed SELECT 7, amount, at, ts, doc, raw, fixed, small, note, flag FROM typed WHERE id = 1',
    );
    await sql(
      "UPDATE typed SET amount = '0.0000000001', at = '1999-12-31 23:59:59.999999', ts = '2038-01-19 03:14:07.499999', doc = '[]', raw = 0x00, fixed = 0x00000000, small = 0, flag = b'111' WHERE id = 7",
    );
    const streamed = (await read({ tables: ['shop.typed'] }, r.cursor)).rows.at(-1) as Record<
      string,
      unknown
    >;
    const snapshotted = (await read({ tables: ['shop.typed'] }, null)).rows.find((x) => x.id === '7');
    const data = (x: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('_')));
    expect(streamed._op).toBe('update');
    expect(data(streamed)).toEqual(data(snapshotted as Record<string, unknown>));
    expect(streamed).toMatchObject({ amount: '0.0000000001', at: '1999-12-31 23:59:59.999999', small: 0 });
    // Within a transaction the rows share its commit position; transactions come in order.
    expect(r.rows[1]._position).toBe(r.rows[2]._position);
    expect(String(r.rows[0]._position) < String(r.rows[3]._position)).toBe(true);
    expect(Date.parse(String(r.rows[0]._committed_at))).toBeGreaterThan(Date.now() - 60_000);
    const cp = parseCheckpoint(r.cursor);
    expect(cp.phase === 'stream' && cp.at.gtid).toMatch(/^0-1-\d+$/);
  });

  it('reads with the least-privilege grants of the docs', async () => {
    await sql("CREATE USER 'sluice_cdc'@'127.0.0.1' IDENTIFIED BY 'cdc-secret'");
    await sql("GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'sluice_cdc'@'127.0.0.1'");
    await sql(`GRANT SELECT ON ${DB}.* TO 'sluice_cdc'@'127.0.0.1'`);
    await sql('CREATE TABLE granted (id INT PRIMARY KEY, v TEXT)');
    await sql("INSERT INTO granted VALUES (1, 'a')");
    user = { name: 'sluice_cdc', password: 'cdc-secret' };
    try {
      const op = { tables: ['shop.granted'] };
      const snap = await read(op, null);
      expect(snap.rows.map((x) => [x._op, x.id, x.v])).toEqual([['insert', 1, 'a']]);
      await sql("UPDATE granted SET v = 'b'");
      const r = await read(op, snap.cursor);
      expect(r.rows.map((x) => [x._op, x.id, x.v])).toEqual([['update', 1, 'b']]);
      expect(
        await mysql.changes.check(
          connection(),
          {
            operation_type: 'cdc',
            tables: ['shop.granted'],
            snapshot: 'initial',
            max_changes: 10,
            max_seconds: 10,
          },
          ctx,
        ),
      ).toEqual([]);
    } finally {
      user = { name: 'root', password: '' };
    }
  });

  it('moves the position on when only other tables changed, and reports the lag', async () => {
    await sql('CREATE TABLE quiet (id INT PRIMARY KEY)');
    await sql('CREATE TABLE busy (id INT PRIMARY KEY)');
    const a = await read({ tables: ['shop.quiet'], snapshot: 'never' }, null);
    for (let i = 0; i < 20; i++) await sql('INSERT INTO busy VALUES (?)', [i]);
    expect((await mysqlLag(connection(), a.cursor, ctx)).lag_bytes).toBeGreaterThan(0);
    const b = await read({ tables: ['shop.quiet'] }, a.cursor);
    expect(b.rows).toEqual([]);
    expect(b.cursor).not.toBe(a.cursor);
    expect(await mysqlLag(connection(), b.cursor, ctx)).toMatchObject({
      lag_bytes: 0,
      oldest_binlog: 'binlog.000001',
    });
    expect(await mysql.changes.captures(connection(), 'sluice_', ctx)).toEqual([]);
  });

  it('snapshots and streams without gap or duplicate under concurrent writes', async () => {
    await sql('CREATE TABLE orders (id INT PRIMARY KEY, qty INT NOT NULL, note VARCHAR(40))');
    const values = Array.from({ length: 3000 }, (_, i) => `(${i + 1}, ${i}, 'n${i}')`).join(',');
    await sql(`INSERT INTO orders VALUES ${values}`);
    const writer = await server.connect(DB);
    let stop = false;
    let next = 5000;
    const writes = (async () => {
      while (!stop) {
        const id = 1 + Math.floor(Math.random() * 3000);
        await writer.query('UPDATE orders SET qty = qty + 1 WHERE id = ?', [id]);
        await writer.query('INSERT INTO orders VALUES (?, 0, ?)', [next, 'new']);
        await writer.query('DELETE FROM orders WHERE id = ?', [next - 3]);
        next += 1;
      }
    })();
    const op = { tables: ['shop.orders'], max_changes: 700 };
    const target = new Map<string, Record<string, unknown>>();
    let cursor: string | null = null;
    let snapshotRuns = 0;
    // The snapshot spreads over several runs (max_changes) while the writer goes on.
    for (;;) {
      const r = await read(op, cursor);
      apply(target, r.rows);
      cursor = r.cursor;
      snapshotRuns += 1;
      expect(r.rows.length).toBeLessThanOrEqual(700);
      if (parseCheckpoint(cursor).phase === 'stream') break;
    }
    expect(snapshotRuns).toBeGreaterThan(4);
    stop = true;
    await writes;
    await writer.end();
    const rest = await drain(op, cursor);
    for (const rows of rest.runs) apply(target, rows);
    const source = (await sql('SELECT id, qty, note FROM orders ORDER BY id')) as any[];
    const copied = [...target.values()]
      .map((r) => ({ id: r.id, qty: r.qty, note: r.note }))
      .sort((x, y) => Number(x.id) - Number(y.id));
    expect(copied).toEqual(source);
  });

  it('hands on a TRUNCATE of a captured table as a truncate row, in order; others are not seen', async () => {
    await sql('CREATE TABLE cut (id INT PRIMARY KEY, v VARCHAR(20))');
    await sql('CREATE TABLE `cut other` (id INT PRIMARY KEY)');
    const op = { tables: [`${DB}.cut`], snapshot: 'never' as const };
    const start = await read(op, null);
    const target = new Map<string, Record<string, unknown>>();
    await sql(`INSERT INTO cut VALUES (1, 'before'), (2, 'before')`);
    await sql('TRUNCATE TABLE cut');
    await sql(`INSERT INTO cut VALUES (3, 'after')`);
    await sql('TRUNCATE `cut other`');
    await sql(`/* a comment */ TRUNCATE \`${DB}\`.\`cut\``);
    await sql(`INSERT INTO cut VALUES (4, 'last')`);
    const r = await read(op, start.cursor);
    expect(r.rows.map((x) => [x._op, x._table, x.id])).toEqual([
      ['insert', `${DB}.cut`, 1],
      ['insert', `${DB}.cut`, 2],
      ['truncate', `${DB}.cut`, null],
      ['insert', `${DB}.cut`, 3],
      ['truncate', `${DB}.cut`, null],
      ['insert', `${DB}.cut`, 4],
    ]);
    expect(r.rows[2]).toMatchObject({ v: null, _unchanged: null });
    expect(String(r.rows[2]._position)).toMatch(/^binlog\.\d+:\d+$/);
    expect(String(r.rows[2]._committed_at)).toMatch(/^\d{4}-\d\d-\d\dT/);
    apply(target, r.rows);
    expect([...target.keys()]).toEqual(['4']);
  });

  it('drains a 10,000-change backlog over bounded reads', async () => {
    await sql('CREATE TABLE backlog (id INT PRIMARY KEY, v INT)');
    const start = await read({ tables: ['shop.backlog'], snapshot: 'never' }, null);
    for (let t = 0; t < 100; t++) {
      const rows = Array.from({ length: 100 }, (_, i) => `(${t * 100 + i}, ${t})`).join(',');
      await sql(`INSERT INTO backlog VALUES ${rows}`);
    }
    const { runs } = await drain({ tables: ['shop.backlog'], max_changes: 3000 }, start.cursor);
    // Whole transactions of 100 rows: a run stops at the first boundary at or past the bound.
    expect(runs.map((r) => r.length)).toEqual([3000, 3000, 3000, 1000]);
    const ids = runs.flat().map((r) => Number(r.id));
    expect(ids).toEqual(Array.from({ length: 10_000 }, (_, i) => i));
  });

  it('stops at a transaction boundary once max_seconds passed, losing nothing', async () => {
    await sql('CREATE TABLE timed (id INT PRIMARY KEY)');
    const start = await read({ tables: ['shop.timed'], snapshot: 'never' }, null);
    for (let i = 0; i < 50; i++) await sql('INSERT INTO timed VALUES (?), (?)', [2 * i, 2 * i + 1]);
    // A clock that reads an hour later after the run started: the bound has passed at once.
    let calls = 0;
    const clock = () => (calls++ === 0 ? 0 : 3_600_000);
    const step = stepContext(
      {
        kind: 'source',
        data_source_ref: 'db',
        operation: { operation_type: 'cdc', tables: ['shop.timed'], max_seconds: 5 },
      },
      { cursor: start.cursor },
    );
    const out = await readMysqlChanges(connection(), step, 'sluice_test', ctx, clock);
    const { items } = await collect(out.payload);
    // At most the transaction under way when the bound was seen; never half of one.
    expect(items.length % 2).toBe(0);
    expect(items.length).toBeLessThan(100);
    const rest = await read({ tables: ['shop.timed'] }, (await out.nextCursor()) as string);
    expect(items.length + rest.rows.length).toBe(100);
  });

  it('a read stopped half-way commits nothing, lets go of the server, and is read again whole', async () => {
    await sql('CREATE TABLE halted (id INT PRIMARY KEY)');
    const start = await read({ tables: ['shop.halted'], snapshot: 'never' }, null);
    for (let t = 0; t < 30; t++) {
      await sql(
        `INSERT INTO halted VALUES ${Array.from({ length: 500 }, (_, i) => `(${t * 500 + i})`).join(',')}`,
      );
    }
    const step = stepContext(
      {
        kind: 'source',
        data_source_ref: 'db',
        operation: { operation_type: 'cdc', tables: ['shop.halted'] },
      },
      { cursor: start.cursor },
    );
    const out = await mysql.changes.read(connection(), step, 'sluice_test', ctx);
    if (out.payload.kind !== 'rows') throw new Error('rows expected');
    for await (const batch of out.payload.batches) {
      expect(batch.length).toBeGreaterThan(0);
      break;
    }
    await expect(out.nextCursor()).rejects.toThrow(/not read to its end/);
    // The binlog dump of that read ends (the library kills it from the control session).
    let dumps = 1;
    for (let i = 0; i < 50 && dumps > 0; i++) {
      const list = (await sql('SHOW PROCESSLIST')) as { Command: string }[];
      dumps = list.filter((p) => p.Command === 'Binlog Dump').length;
      if (dumps > 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(dumps).toBe(0);
    const again = await read({ tables: ['shop.halted'] }, start.cursor);
    expect(again.rows.map((x) => x.id)).toEqual(Array.from({ length: 15_000 }, (_, i) => i));
  });

  it('copies a table added after the initial snapshot once, the others not; with snapshot never follows it', async () => {
    await sql('CREATE TABLE first_t (id INT PRIMARY KEY, v VARCHAR(10))');
    await sql('CREATE TABLE later_t (id INT PRIMARY KEY, v VARCHAR(10))');
    await sql('CREATE TABLE never_t (id INT PRIMARY KEY)');
    await sql(`INSERT INTO first_t VALUES (1, 'f1')`);
    await sql(`INSERT INTO later_t VALUES (1, 'l1'), (2, 'l2')`);
    const snap = await drain({ tables: ['shop.first_t'] }, null);
    expect(snap.runs.flat().map((x) => [x._table, x.id])).toEqual([['shop.first_t', 1]]);
    // Changes of the new table logged before the run that adds it: in its copy, not again.
    await sql(`UPDATE later_t SET v = 'l2!' WHERE id = 2`);
    await sql(`INSERT INTO first_t VALUES (2, 'f2')`);
    const both = { tables: ['shop.first_t', 'shop.later_t'] };
    const r = await read(both, snap.cursor);
    expect(r.rows.map((x) => [x._op, x._table, x.id, x.v])).toEqual([
      ['insert', 'shop.later_t', 1, 'l1'],
      ['insert', 'shop.later_t', 2, 'l2!'],
      ['insert', 'shop.first_t', 2, 'f2'],
    ]);
    expect(parseCheckpoint(r.cursor).tables).toEqual(both.tables);
    await sql(`UPDATE later_t SET v = 'l1!' WHERE id = 1`);
    const next = await read(both, r.cursor);
    expect(next.rows.map((x) => [x._op, x._table, x.id, x.v])).toEqual([
      ['update', 'shop.later_t', 1, 'l1!'],
    ]);

    await sql('INSERT INTO never_t VALUES (1)');
    await sql('INSERT INTO never_t VALUES (2)');
    // snapshot never: the new table's changes after the committed position, no copy.
    const never = await read({ tables: ['shop.later_t', 'shop.never_t'], snapshot: 'never' }, next.cursor);
    expect(never.rows.map((x) => [x._op, x._table, x.id])).toEqual([
      ['insert', 'shop.never_t', 1],
      ['insert', 'shop.never_t', 2],
    ]);
    await sql('INSERT INTO never_t VALUES (3)');
    await sql('INSERT INTO first_t VALUES (3, "gone")');
    const after = await read({ tables: ['shop.later_t', 'shop.never_t'], snapshot: 'never' }, never.cursor);
    expect(after.rows.map((x) => [x._table, x.id])).toEqual([['shop.never_t', 3]]);
  });

  it('keeps its position across a server restart', async () => {
    await sql('CREATE TABLE durable (id INT PRIMARY KEY)');
    const start = await read({ tables: ['shop.durable'], snapshot: 'never' }, null);
    await sql('INSERT INTO durable VALUES (1), (2)');
    await db.end();
    await server.stop();
    await server.start();
    db = await server.connect(DB);
    await sql('INSERT INTO durable VALUES (3)');
    await sql('DELETE FROM durable WHERE id = 1');
    const r = await read({ tables: ['shop.durable'] }, start.cursor);
    expect(r.rows.map((x) => [x._op, x.id])).toEqual([
      ['insert', 1],
      ['insert', 2],
      ['insert', 3],
      ['delete', 1],
    ]);
    const again = await read({ tables: ['shop.durable'] }, r.cursor);
    expect(again.rows).toEqual([]);
  });

  it('fails clearly on a column added mid-stream', async () => {
    await sql('CREATE TABLE shifting (id INT PRIMARY KEY, a INT)');
    const start = await read({ tables: ['shop.shifting'], snapshot: 'never' }, null);
    await sql('INSERT INTO shifting VALUES (1, 1)');
    const before = await read({ tables: ['shop.shifting'] }, start.cursor);
    await sql('ALTER TABLE shifting ADD COLUMN b INT');
    await sql('INSERT INTO shifting VALUES (2, 2, 2)');
    // Read with the definition taken before the DDL: the binlog's table map disagrees.
    await sql('INSERT INTO shifting VALUES (3, 3, 3)');
    const after = await read({ tables: ['shop.shifting'] }, before.cursor);
    expect(after.rows.map((x) => [x.id, x.b])).toEqual([
      [2, 2],
      [3, 3],
    ]);
    await sql('ALTER TABLE shifting DROP COLUMN a');
    await sql('INSERT INTO shifting VALUES (4, 4)');
    const old = await read({ tables: ['shop.shifting'] }, before.cursor).then(
      () => null,
      (e) => e,
    );
    expect(old).toBeInstanceOf(ConnectorError);
    // With binlog_row_metadata=FULL (this server) the binlog names its columns; without it the
    // library compares the event's column count with the table's now and says so.
    expect(old.message).toMatch(
      /columns of shop\.shifting changed.*binlog have (\(id, a, b\)|3 columns), the table now has \(id, b\)|binlog could not be decoded: Table shop\.shifting schema changed.*event has 3 columns/,
    );
  });

  it('fails clearly when the position is older than the oldest binlog kept, naming the setting', async () => {
    await sql('CREATE TABLE purged (id INT PRIMARY KEY)');
    const start = await read({ tables: ['shop.purged'], snapshot: 'never' }, null);
    await sql('INSERT INTO purged VALUES (1)');
    await sql('FLUSH BINARY LOGS');
    const [{ File }] = await sql('SHOW MASTER STATUS');
    // MariaDB keeps a binlog until InnoDB's log has caught up with it (its binlog checkpoint).
    for (let i = 0; i < 100; i++) {
      await sql(`PURGE BINARY LOGS TO '${File}'`);
      if ((await sql('SHOW BINARY LOGS')).length === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const err = await failure(read({ tables: ['shop.purged'] }, start.cursor));
    expect(err.message).toMatch(/older than the oldest binlog the server keeps/);
    expect(err.message).toMatch(/binlog_expire_logs_seconds \/ expire_logs_days/);
    expect((await mysqlLag(connection(), start.cursor, ctx)).lag_bytes).toBeNull();
  });
});

// The binlog library runs with the repository's patch to its decoding hot paths
// (patches/@vlasky+zongji+<version>.patch, applied by `npm install`'s postinstall;
// docs/connectors/mysql.md "Change data capture"). These fail when the patch is missing or stale,
// and hold the patched decoding to the snapshot's exact values for the types it reads
// differently: DECIMAL of every layout, DATETIME(0..6), signed and unsigned integers at their
// limits, text in two charsets and both length prefixes, null bitmaps over several bytes, update
// images, and table maps met again (the cached column readers).

describe('the binlog library patch', () => {
  it('is applied to the installed version it was made for', () => {
    const root = fileURLToPath(new URL('../../../../../', import.meta.url));
    const require = createRequire(import.meta.url);
    const installed = path.dirname(require.resolve('@vlasky/zongji', { paths: [root] }));
    const version = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')).version;
    const patch = path.join(root, 'patches', `@vlasky+zongji+${version}.patch`);
    expect(fs.existsSync(patch), `no patch for @vlasky/zongji ${version}: redo it (npx patch-package)`).toBe(
      true,
    );
    // Every line the patch adds is in the installed file it names.
    let file = '';
    const added = new Map<string, string[]>();
    for (const line of fs.readFileSync(patch, 'utf8').split('\n')) {
      if (line.startsWith('+++ b/')) {
        file = line.slice('+++ b/node_modules/@vlasky/zongji/'.length);
        added.set(file, []);
      } else if (line.startsWith('+') && line.trim() !== '+') {
        added.get(file)?.push(line.slice(1));
      }
    }
    expect([...added.keys()]).toContain('lib/common.js');
    for (const [name, lines] of added) {
      const text = fs.readFileSync(path.join(installed, name), 'utf8');
      const missing = lines.filter((l) => !text.includes(l));
      expect(missing, `${name} lacks the patch (npm install applies it)`).toEqual([]);
    }
  });
});

describe('mysql changes: patched decoding', () => {
  it('hands on exactly the values a snapshot reads, for every layout the patch decodes', async () => {
    await sql(`CREATE TABLE wide_types (
      id INT PRIMARY KEY,
      d0 DECIMAL(5,0), d1 DECIMAL(10,2), d2 DECIMAL(18,9), d3 DECIMAL(30,10), d4 DECIMAL(65,30),
      d5 DECIMAL(4,4), d6 DECIMAL(15,0), d7 DECIMAL(16,1), d8 DECIMAL(9,0),
      t0 DATETIME, t1 DATETIME(1), t3 DATETIME(3), t5 DATETIME(5), t6 DATETIME(6),
      i1 TINYINT, u1 TINYINT UNSIGNED, i2 SMALLINT, u2 SMALLINT UNSIGNED, i3 MEDIUMINT,
      u3 MEDIUMINT UNSIGNED, i4 INT, u4 INT UNSIGNED, i8 BIGINT, u8 BIGINT UNSIGNED,
      s1 VARCHAR(20), s2 VARCHAR(300), s3 VARCHAR(20) CHARACTER SET latin1, s4 CHAR(5))`);
    await sql('CREATE TABLE wide_side (id INT PRIMARY KEY, amount DECIMAL(12,2), at DATETIME(6))');
    const start = await read({ tables: ['shop.wide_types', 'shop.wide_side'], snapshot: 'never' }, null);
    const rows: unknown[][] = [
      [
        1,
        '99999',
        '12345678.90',
        '123456789.123456789',
        '12345678901234567890.0123456789',
        `${'9'.repeat(35)}.${'9'.repeat(30)}`,
        '0.9999',
        '999999999999999',
        '999999999999999.9',
        '999999999',
        '2024-02-29 23:59:59',
        '2024-02-29 23:59:59.9',
        '1000-01-01 00:00:00.001',
        '9999-12-31 23:59:59.99999',
        '2024-01-02 03:04:05.000001',
        -128,
        255,
        -32768,
        65535,
        -8388608,
        16777215,
        -2147483648,
        4294967295,
        '-9223372036854775808',
        '18446744073709551615',
        'héllo 😀',
        'x'.repeat(300),
        'café',
        'ab',
      ],
      [
        2,
        '-99999',
        '-0.01',
        '-0.000000001',
        '-12345678901234567890.0123456789',
        `-${'9'.repeat(35)}.${'0'.repeat(29)}1`,
        '-0.0001',
        '-100000000000000',
        '-0.5',
        '-1',
        '0000-00-00 00:00:00',
        '1970-01-01 00:00:00.0',
        '2024-06-30 12:00:00.500',
        '2000-01-01 00:00:00.00001',
        '2024-01-02 03:04:05.999999',
        127,
        0,
        32767,
        0,
        8388607,
        0,
        2147483647,
        0,
        '9223372036854775807',
        '0',
        '',
        '',
        '',
        '',
      ],
      [3, '0', '0.00', '0.000000000', '0', '0', '0.0000', '0', '0.0', '0', ...Array(19).fill(null)],
      [4, ...Array(28).fill(null)],
    ];
    await sql('START TRANSACTION');
    for (const r of rows) await sql(`INSERT INTO wide_types VALUES (${r.map(() => '?').join(', ')})`, r);
    // Two tables in one transaction, then the same table maps again in later ones.
    await sql("INSERT INTO wide_side VALUES (1, -12.5, '2024-01-02 03:04:05.123456')");
    await sql('COMMIT');
    for (let i = 0; i < 3; i++) {
      await sql(
        'UPDATE wide_types SET u4 = u4 DIV 2, d1 = d1 + 1, t6 = t6 - INTERVAL 1 SECOND WHERE id <= 2',
      );
      await sql("INSERT INTO wide_side VALUES (?, ?, '2024-01-02 03:04:59.999999')", [10 + i, `${i}.0${i}`]);
    }
    await sql("UPDATE wide_types SET s1 = NULL, i8 = -1, d4 = '-1' WHERE id = 1");
    const streamed = (await read({ tables: ['shop.wide_types', 'shop.wide_side'] }, start.cursor)).rows;
    expect(streamed.map((r) => r._op)).toEqual([
      ...Array(5).fill('insert'),
      ...['update', 'update', 'insert'],
      ...['update', 'update', 'insert'],
      ...['update', 'update', 'insert'],
      'update',
    ]);
    // The last state of each row in the stream is the snapshot's row, column for column.
    const data = (x: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('_')));
    const last = new Map(streamed.map((r) => [`${r._table}:${r.id}`, data(r)]));
    const snapshot = (await read({ tables: ['shop.wide_types', 'shop.wide_side'] }, null)).rows;
    expect(snapshot).toHaveLength(last.size);
    for (const r of snapshot) expect(last.get(`${r._table}:${r.id}`)).toEqual(data(r));
    // And the inserted values are the ones written (the snapshot could share a misreading).
    const first = streamed[0];
    expect(first).toMatchObject({
      d0: '99999',
      d4: `${'9'.repeat(35)}.${'9'.repeat(30)}`,
      d5: '0.9999',
      d7: '999999999999999.9',
      t1: '2024-02-29 23:59:59.9',
      t5: '9999-12-31 23:59:59.99999',
      i1: -128,
      u4: 4294967295,
      i8: '-9223372036854775808',
      u8: '18446744073709551615',
      s3: 'café',
    });
    expect(streamed[1]).toMatchObject({
      d1: '-0.01',
      d2: '-0.000000001',
      d8: '-1',
      t0: '0000-00-00 00:00:00',
    });
    expect(streamed.at(-1)).toMatchObject({ id: 1, s1: null, i8: '-1', d4: `-1.${'0'.repeat(30)}` });
  });
});
