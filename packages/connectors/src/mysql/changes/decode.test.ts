import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type mysqlDriver from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MariadbServer, startMariadbServer } from '../../../../../test/peers/mariadb-server';
import { collect, stepContext } from '../../../../../test/support/step-context';
import { egressPolicy } from '../../egress';
import { type ConnectorContext, defaultLimits } from '../../types';
import { mysql, mysqlConfigSchema } from '../index';

// The binlog library runs with the repository's patch to its decoding hot paths
// (patches/@vlasky+zongji+<version>.patch, applied by `npm install`'s postinstall;
// docs/connectors/mysql.md "Change data capture", docs/benchmarks.md). These tests fail when the
// patch is missing or stale, and hold the patched decoding to the snapshot's exact values for
// the types it reads differently: DECIMAL of every layout, DATETIME(0..6), signed and unsigned
// integers at their limits, text in two charsets and both length prefixes, null bitmaps over
// several bytes, update images, and table maps met again (the cached column readers).

const root = fileURLToPath(new URL('../../../../../', import.meta.url));

describe('the binlog library patch', () => {
  it('is applied to the installed version it was made for', () => {
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

const DB = 'decode';
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
let server: MariadbServer;
let db: mysqlDriver.Connection;

const sql = async (text: string, values: unknown[] = []) => (await db.query(text, values))[0] as any;

async function read(tables: string[], cursor: string | null, snapshot: 'initial' | 'never' = 'initial') {
  const connection = {
    config: mysqlConfigSchema.parse({
      host: '127.0.0.1',
      port: server.port,
      database: DB,
      user: 'root',
      allow_private_hosts: true,
    }),
    credentials: { password: '' },
  };
  const step = stepContext(
    { kind: 'source', data_source_ref: 'db', operation: { operation_type: 'cdc', tables, snapshot } },
    { cursor },
  );
  const out = await mysql.changes.read(connection, step, 'sluice_test', ctx);
  if (out.payload.kind !== 'rows') throw new Error('rows expected');
  const names = out.payload.columns.map((c) => c.name);
  const { items } = await collect(out.payload);
  const rows = (items as unknown[][]).map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])));
  return { rows, cursor: (await out.nextCursor()) as string };
}

const data = (x: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('_')));

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

describe('mysql changes: patched decoding', () => {
  it('hands on exactly the values a snapshot reads, for every layout the patch decodes', async () => {
    await sql(`CREATE TABLE wide (
      id INT PRIMARY KEY,
      d0 DECIMAL(5,0), d1 DECIMAL(10,2), d2 DECIMAL(18,9), d3 DECIMAL(30,10), d4 DECIMAL(65,30),
      d5 DECIMAL(4,4), d6 DECIMAL(15,0), d7 DECIMAL(16,1), d8 DECIMAL(9,0),
      t0 DATETIME, t1 DATETIME(1), t3 DATETIME(3), t5 DATETIME(5), t6 DATETIME(6),
      i1 TINYINT, u1 TINYINT UNSIGNED, i2 SMALLINT, u2 SMALLINT UNSIGNED, i3 MEDIUMINT,
      u3 MEDIUMINT UNSIGNED, i4 INT, u4 INT UNSIGNED, i8 BIGINT, u8 BIGINT UNSIGNED,
      s1 VARCHAR(20), s2 VARCHAR(300), s3 VARCHAR(20) CHARACTER SET latin1, s4 CHAR(5))`);
    await sql('CREATE TABLE side (id INT PRIMARY KEY, amount DECIMAL(12,2), at DATETIME(6))');
    const start = await read([`${DB}.wide`, `${DB}.side`], null, 'never');
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
    for (const r of rows) await sql(`INSERT INTO wide VALUES (${r.map(() => '?').join(', ')})`, r);
    // Two tables in one transaction, then the same table maps again in later ones.
    await sql("INSERT INTO side VALUES (1, -12.5, '2024-01-02 03:04:05.123456')");
    await sql('COMMIT');
    for (let i = 0; i < 3; i++) {
      await sql('UPDATE wide SET u4 = u4 DIV 2, d1 = d1 + 1, t6 = t6 - INTERVAL 1 SECOND WHERE id <= 2');
      await sql("INSERT INTO side VALUES (?, ?, '2024-01-02 03:04:59.999999')", [10 + i, `${i}.0${i}`]);
    }
    await sql("UPDATE wide SET s1 = NULL, i8 = -1, d4 = '-1' WHERE id = 1");
    const streamed = (await read([`${DB}.wide`, `${DB}.side`], start.cursor)).rows;
    expect(streamed.map((r) => r._op)).toEqual([
      ...Array(5).fill('insert'),
      ...['update', 'update', 'insert'],
      ...['update', 'update', 'insert'],
      ...['update', 'update', 'insert'],
      'update',
    ]);
    // The last state of each row in the stream is the snapshot's row, column for column.
    const last = new Map(streamed.map((r) => [`${r._table}:${r.id}`, data(r)]));
    const snapshot = (await read([`${DB}.wide`, `${DB}.side`], null)).rows;
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
