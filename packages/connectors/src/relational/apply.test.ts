import { randomBytes } from 'node:crypto';
import type { Payload } from '@sluice/engine';
import mysqlDriver from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batches, stepContext } from '../../../../test/support/step-context';
import { bigqueryConnector as bigquery } from '../bigquery/index';
import { egressPolicy } from '../egress';
import { mysql, mysqlConfigSchema } from '../mysql/index';
import { postgres, postgresConfigSchema } from '../postgres/index';
import { snowflakeConnector as snowflake } from '../snowflake/index';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';

// The apply sink mode on the real PostgreSQL and MariaDB (docs/pipeline-spec.md, "how sinks
// write"): change rows compacted to each key's final state and applied by key, unchanged
// columns kept, inside the commit ledger; exact types; 10,000 mixed changes against a
// reference computed here, compared by a hash of both tables.

const PG_ADMIN = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MY_HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
const MY_PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);
const DB = `sluice_apply_${randomBytes(4).toString('hex')}`;
const base: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

const META = ['_op', '_table', '_position', '_committed_at', '_unchanged'];
const COLS = [...META, 'id', 'name', 'doc', 'n'];
type Op = 'insert' | 'update' | 'delete' | 'truncate';
let position = 0;
/** One change row of the items table, as a CDC source hands it on. */
const change = (
  op: Op,
  id: number | null,
  values: { name?: string | null; doc?: string | null; n?: number | null } = {},
  unchanged: string[] | null = null,
) => [
  op,
  'public.items',
  `0/${(++position).toString(16).toUpperCase()}`,
  '2026-01-05T10:00:00.000Z',
  unchanged ? JSON.stringify(unchanged) : null,
  id,
  values.name ?? null,
  values.doc ?? null,
  values.n ?? null,
];
const typeOf = (name: string) => (name === 'id' || name === 'n' ? 'integer' : 'text');
/** Change rows as a payload, cut into batches of `per` rows (batch edges must not matter). */
const changes = (rows: unknown[][], per = 3, columns = COLS): Payload => {
  const cut: unknown[][][] = [];
  for (let i = 0; i < rows.length; i += per) cut.push(rows.slice(i, i + per));
  return {
    kind: 'rows',
    columns: columns.map((name) => ({ name, type: typeOf(name) })),
    batches: batches<unknown[]>(...cut),
  };
};
const applySink = (table: string, extra: Record<string, unknown> = {}) =>
  stepContext({
    kind: 'sink',
    data_source_ref: 'db',
    operation: { operation_type: 'sql', write: { table, mode: 'apply', key: ['id'], ...extra } },
  });

type Target = {
  name: string;
  definition: typeof postgres | typeof mysql;
  connection: () => any;
  query: (text: string, values?: unknown[]) => Promise<any[]>;
  /** A table of the items shape (id key, name, doc, n). */
  items: (table: string) => string;
  /** A hash of the items table's rows in key order. */
  hash: (table: string) => string;
  /** Inserts rows of the items shape with the test's own driver. */
  load: (table: string, rows: unknown[][]) => Promise<void>;
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
    query: async (text, values = []) => (await pgDb.query(text, values)).rows,
    items: (t) => `CREATE TABLE ${t} (id int PRIMARY KEY, name text, doc text NOT NULL DEFAULT '', n int)`,
    hash: (t) =>
      `SELECT md5(coalesce(string_agg(concat_ws('|', id, coalesce(name, '~'), coalesce(doc, '~'), coalesce(n::text, '~')), ',' ORDER BY id), '')) AS h FROM ${t}`,
    load: async (t, rows) => {
      for (let i = 0; i < rows.length; i += 500) {
        const slice = rows.slice(i, i + 500);
        const tuples = slice.map((_, r) => `($${r * 4 + 1}, $${r * 4 + 2}, $${r * 4 + 3}, $${r * 4 + 4})`);
        await pgDb.query(`INSERT INTO ${t} VALUES ${tuples.join(', ')}`, slice.flat());
      }
    },
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
    query: async (text, values = []) => (await myDb.query(text, values))[0] as any[],
    items: (t) =>
      `CREATE TABLE ${t} (id INT PRIMARY KEY, name VARCHAR(100), doc LONGTEXT NOT NULL DEFAULT '', n INT) ENGINE=InnoDB`,
    hash: (t) =>
      `SELECT COALESCE(MD5(GROUP_CONCAT(CONCAT_WS('|', id, COALESCE(name, '~'), COALESCE(doc, '~'), COALESCE(n, '~')) ORDER BY id SEPARATOR ',')), MD5('')) AS h FROM ${t}`,
    load: async (t, rows) => {
      for (let i = 0; i < rows.length; i += 500)
        await myDb.query(`INSERT INTO ${t} VALUES ?`, [rows.slice(i, i + 500)]);
    },
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
  myDb = await mysqlDriver.createConnection({ host: MY_HOST, port: MY_PORT, user: 'root' });
  await myDb.query(`CREATE DATABASE ${DB}`);
  await myDb.query(`USE ${DB}`);
  await myDb.query('SET SESSION group_concat_max_len = 1073741824');
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

async function failure(p: Promise<unknown>, code: string): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(ConnectorError);
  expect(err.code).toBe(code);
  return err as ConnectorError;
}

/** A seeded generator, so a failure can be replayed. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(targets)('$name apply sink', (t) => {
  const apply = (table: string, payload: Payload, commitKey?: string, extra: Record<string, unknown> = {}) =>
    t.definition.sink.write(t.connection(), payload, applySink(table, extra), { ...base, commitKey });
  const rowsOf = async (table: string) =>
    (await t.query(`SELECT id, name, doc, n FROM ${table} ORDER BY id`)).map((r) => ({ ...r }));

  it('compacts a batch to each key’s final state and applies it by key, in row order', async () => {
    await t.query(t.items('compact'));
    await t.query(
      `INSERT INTO compact VALUES (4, 'four', 'd4', 4), (5, 'five', 'd5', 5), (6, 'six', 'd6', 6)`,
    );
    const step = applySink('compact');
    const result = await t.definition.sink.write(
      t.connection(),
      changes([
        change('insert', 1, { name: 'a', doc: 'x', n: 1 }),
        change('update', 1, { name: 'a2', doc: 'x', n: 2 }),
        // inserted then deleted in the batch: nothing is written
        change('insert', 2, { name: 'b', doc: 'y', n: 1 }),
        change('delete', 2),
        // deleted, then inserted again: the new row
        change('insert', 3, { name: 'c', doc: 'z', n: 1 }),
        change('delete', 3),
        change('insert', 3, { name: 'c2', doc: 'z2', n: 3 }),
        change('update', 4, { name: 'four!', doc: 'd4', n: 40 }),
        change('delete', 5),
        // an existing key deleted and inserted again in the batch
        change('delete', 6),
        change('insert', 6, { name: 'six again', doc: 'd6b', n: 60 }),
        // the delete of a key the target does not have is no error
        change('delete', 99),
      ]),
      step,
      base,
    );
    expect(result.rows).toBe(12);
    expect(await rowsOf('compact')).toEqual([
      { id: 1, name: 'a2', doc: 'x', n: 2 },
      { id: 3, name: 'c2', doc: 'z2', n: 3 },
      { id: 4, name: 'four!', doc: 'd4', n: 40 },
      { id: 6, name: 'six again', doc: 'd6b', n: 60 },
    ]);
    expect(step.lines.map((l) => l.message)).toContain(
      'apply: 12 changes compacted to 4 upserts and 3 deletes',
    );
  });

  it('keeps the target’s value of columns a change did not carry, merging earlier changes of the batch', async () => {
    await t.query(t.items('toast'));
    const big = 'large '.repeat(5000);
    await t.query(
      `INSERT INTO toast VALUES (10, 'ten', '${big}', 1), (12, 'twelve', 'd12', 1), (13, 'x', 'd13', 1)`,
    );
    await apply(
      'toast',
      changes([
        // an unchanged TOAST value on update: the target keeps doc
        change('update', 10, { name: 'ten!', n: 2 }, ['doc']),
        // inserted in the batch, then updated without doc: the insert's doc stays
        change('insert', 11, { name: 'eleven', doc: 'd11', n: 1 }),
        change('update', 11, { name: 'eleven!', n: 2 }, ['doc']),
        // two partial updates carrying different columns: both land
        change('update', 12, { doc: 'd12!', n: 2 }, ['name']),
        change('update', 12, { name: 'twelve!', n: 3 }, ['doc']),
        // two updates, neither carrying doc: the target's doc stays
        change('update', 13, { name: 'y', n: 2 }, ['doc']),
        change('update', 13, { name: 'z', n: 3 }, ['doc']),
        // a key the target lacks: no value to keep, the column's default
        change('update', 14, { name: 'fourteen', n: 1 }, ['doc']),
      ]),
    );
    expect(await rowsOf('toast')).toEqual([
      { id: 10, name: 'ten!', doc: big, n: 2 },
      { id: 11, name: 'eleven!', doc: 'd11', n: 2 },
      { id: 12, name: 'twelve!', doc: 'd12!', n: 3 },
      { id: 13, name: 'z', doc: 'd13', n: 3 },
      { id: 14, name: 'fourteen', doc: '', n: 1 },
    ]);
  });

  it('a truncate empties the target in order with the batch: only the changes after it remain', async () => {
    await t.query(t.items('emptied'));
    await t.query(`INSERT INTO emptied VALUES (30, 'old', 'd30', 1), (31, 'old', 'd31', 1)`);
    const step = applySink('emptied');
    const done = await t.definition.sink.write(
      t.connection(),
      changes([
        change('insert', 32, { name: 'before', doc: 'd32', n: 1 }),
        change('update', 30, { name: 'gone', n: 2 }, ['doc']),
        change('truncate', null),
        change('insert', 33, { name: 'after', doc: 'd33', n: 1 }),
        // after the truncate there is no target value to keep: the column is null
        change('update', 34, { doc: 'd34', n: 1 }, ['name']),
      ]),
      step,
      { ...base, commitKey: 'run-t:apply:0' },
    );
    expect(done.rows).toBe(5);
    expect(await rowsOf('emptied')).toEqual([
      { id: 33, name: 'after', doc: 'd33', n: 1 },
      { id: 34, name: null, doc: 'd34', n: 1 },
    ]);
    expect(step.lines.map((l) => l.message)).toContain(
      'apply: 5 changes compacted to a truncate, 2 upserts and 0 deletes',
    );
    // Retried under its commit key after newer rows arrived: the truncate is not applied again.
    await apply(
      'emptied',
      changes([change('insert', 35, { name: 'later', doc: 'd35', n: 1 })]),
      'run-u:apply:0',
    );
    await t.definition.sink.write(t.connection(), changes([change('truncate', null)]), applySink('emptied'), {
      ...base,
      commitKey: 'run-t:apply:0',
    });
    expect((await rowsOf('emptied')).map((r) => r.id)).toEqual([33, 34, 35]);
  });

  it('writes a commit key once: a retried batch changes nothing twice', async () => {
    await t.query(t.items('ledgered'));
    const first = changes([
      change('insert', 20, { name: 'a', doc: 'd', n: 1 }),
      change('insert', 21, { doc: 'e' }),
    ]);
    const done = await apply('ledgered', first, 'run-1:apply:0');
    expect(done.rows).toBe(2);
    await apply(
      'ledgered',
      changes([change('update', 20, { name: 'b', doc: 'd', n: 2 }), change('delete', 21)]),
      'run-2:apply:0',
    );
    // The first batch again under its commit key: neither the insert of 21 nor 20's old values return.
    const again = await apply(
      'ledgered',
      changes([change('insert', 20, { name: 'a', doc: 'd', n: 1 }), change('insert', 21, { doc: 'e' })]),
      'run-1:apply:0',
    );
    expect(again).toEqual(done);
    expect(await rowsOf('ledgered')).toEqual([{ id: 20, name: 'b', doc: 'd', n: 2 }]);
    const step = applySink('ledgered').step;
    expect(await t.definition.ledger.committedWrites(t.connection(), step, 'run-2:', base)).toEqual({
      rows: 2,
      bytes: expect.any(Number),
    });
  });

  it('refuses input that is not change rows, and changes of two tables, naming the fix', async () => {
    await t.query(t.items('refused'));
    const plain: Payload = {
      kind: 'rows',
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'doc', type: 'text' },
      ],
      batches: batches<unknown[]>([[1, 'a']]),
    };
    const noOp = await failure(apply('refused', plain), 'INVALID_STATEMENT');
    expect(noOp.message).toContain('_op column');
    const two = changes([
      change('insert', 1, { doc: 'a' }),
      ['insert', 'public.other', '0/1', null, null, 2, null, 'b', null],
    ]);
    expect((await failure(apply('refused', two), 'INVALID_STATEMENT')).message).toContain(
      "WHERE _table = '…'",
    );
    const bad = changes([['upsert', 'public.items', '0/1', null, null, 1, null, 'a', null]]);
    expect((await failure(apply('refused', bad), 'INVALID_STATEMENT')).message).toContain('"upsert"');
    expect(await rowsOf('refused')).toEqual([]);
    const noKey = stepContext({
      kind: 'sink',
      data_source_ref: 'db',
      operation: { operation_type: 'sql', write: { table: 'refused', mode: 'apply' } },
    });
    await failure(t.definition.sink.write(t.connection(), changes([]), noKey, base), 'INVALID_STATEMENT');
  });

  it('creates a missing table without the metadata columns, keyed by key; writes _committed_at where the target has it', async () => {
    await apply('created', changes([change('insert', 1, { name: 'a', doc: 'd', n: 1 })]), undefined, {
      create_table: true,
    });
    const cols = (
      await t.query(
        t.name === 'postgres'
          ? "SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'created' ORDER BY ordinal_position"
          : `SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '${DB}' AND TABLE_NAME = 'created' ORDER BY ORDINAL_POSITION`,
      )
    ).map((r) => r.c);
    expect(cols).toEqual(['id', 'name', 'doc', 'n']);
    // The key is the primary key: an update by key lands on the same row.
    await apply('created', changes([change('update', 1, { name: 'b', doc: 'd', n: 2 })]));
    expect(await rowsOf('created')).toEqual([{ id: 1, name: 'b', doc: 'd', n: 2 }]);

    await t.query(
      t.name === 'postgres'
        ? 'CREATE TABLE stamped (id int PRIMARY KEY, doc text, _committed_at timestamptz)'
        : 'CREATE TABLE stamped (id INT PRIMARY KEY, doc TEXT, _committed_at DATETIME(6))',
    );
    const cols2 = [...META, 'id', 'doc'];
    await apply(
      'stamped',
      changes([['insert', 'public.items', '0/9', '2026-01-05T10:00:00.123456Z', null, 1, 'a']], 3, cols2),
    );
    const [row] = await t.query(
      t.name === 'postgres'
        ? "SELECT to_char(_committed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS at FROM stamped"
        : "SELECT DATE_FORMAT(_committed_at, '%Y-%m-%d %H:%i:%s.%f') AS at FROM stamped",
    );
    expect(row.at).toBe('2026-01-05 10:00:00.123456');
  });

  it('applies by a composite key', async () => {
    await t.query(
      t.name === 'postgres'
        ? 'CREATE TABLE pairs (a int, b text, v text NOT NULL, w int, PRIMARY KEY (a, b))'
        : 'CREATE TABLE pairs (a INT, b VARCHAR(10), v TEXT NOT NULL, w INT, PRIMARY KEY (a, b)) ENGINE=InnoDB',
    );
    await t.query(`INSERT INTO pairs VALUES (1, 'x', 'v1x', 0), (2, 'z', 'v2z', 0), (3, 'q', 'v3q', 0)`);
    const cols = [...META, 'a', 'b', 'v', 'w'];
    const c = (
      op: Op,
      a: number,
      b: string,
      v: string | null,
      w: number | null,
      unchanged: string[] | null = null,
    ) => [op, 'public.pairs', '0/1', null, unchanged && JSON.stringify(unchanged), a, b, v, w];
    const payload: Payload = {
      kind: 'rows',
      columns: cols.map((name) => ({ name, type: name === 'a' || name === 'w' ? 'integer' : 'text' })),
      batches: batches<unknown[]>([
        c('delete', 1, 'x', null, null),
        c('insert', 1, 'y', 'v1y', 1),
        c('update', 2, 'z', null, 2, ['v']),
        // the same a, another b: its own key
        c('insert', 3, 'r', 'v3r', 3),
        c('delete', 3, 'q', null, null),
      ]),
    };
    await t.definition.sink.write(
      t.connection(),
      payload,
      stepContext({
        kind: 'sink',
        data_source_ref: 'db',
        operation: { operation_type: 'sql', write: { table: 'pairs', mode: 'apply', key: ['a', 'b'] } },
      }),
      base,
    );
    expect((await t.query('SELECT a, b, v, w FROM pairs ORDER BY a, b')).map((r) => ({ ...r }))).toEqual([
      { a: 1, b: 'y', v: 'v1y', w: 1 },
      { a: 2, b: 'z', v: 'v2z', w: 2 },
      { a: 3, b: 'r', v: 'v3r', w: 3 },
    ]);
  });

  it('keeps exact values: numeric/DECIMAL, timestamptz/DATETIME(6), JSON, bytes, 64-bit unsigned keys', async () => {
    const pgSide = t.name === 'postgres';
    await t.query(
      pgSide
        ? 'CREATE TABLE typed (id numeric(20,0) PRIMARY KEY, amount numeric(40,20), at timestamptz, js jsonb, bin bytea NOT NULL)'
        : 'CREATE TABLE typed (id BIGINT UNSIGNED PRIMARY KEY, amount DECIMAL(65,30), at DATETIME(6), js JSON, bin VARBINARY(16) NOT NULL) ENGINE=InnoDB',
    );
    const cols = [...META, 'id', 'amount', 'at', 'js', 'bin'];
    const row = (op: Op, id: string, v: unknown[], unchanged: string[] | null = null) => [
      op,
      'public.typed',
      '0/1',
      '2026-01-05T10:00:00Z',
      unchanged && JSON.stringify(unchanged),
      id,
      ...v,
    ];
    const top = '18446744073709551615';
    const next = '18446744073709551614';
    const third = '18446744073709551613';
    const payload: Payload = {
      kind: 'rows',
      columns: cols.map((name) => ({ name, type: name === 'bin' ? 'bytea' : 'text' })),
      batches: batches<unknown[]>(
        [
          row('insert', top, [
            '12345678901234567890.12345678901234567890',
            '2026-01-05 02:00:00.123456+02',
            { a: [1, 'x'], b: null },
            Buffer.from([0, 1, 255]),
          ]),
          row('insert', next, ['1.5', '2026-01-05T00:00:00.000001Z', '{"k": "v"}', Buffer.from([7])]),
          row('insert', third, ['3', '2026-01-05T00:00:00Z', '[]', Buffer.from([3])]),
        ],
        [
          // keys differing in the last of 20 digits: each lands on its own row
          row(
            'update',
            top,
            ['-0.00000000000000000001', '2026-12-31T23:59:59.999999Z', { a: 2 }, null],
            ['bin'],
          ),
          row('delete', next, [null, null, null, null]),
        ],
      ),
    };
    await apply('typed', payload);
    const got = await t.query(
      pgSide
        ? `SELECT id::text AS id, amount::text AS amount, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS at,
                  js::text AS js, encode(bin, 'hex') AS bin FROM typed ORDER BY id`
        : `SELECT CAST(id AS CHAR) AS id, CAST(amount AS CHAR) AS amount, DATE_FORMAT(at, '%Y-%m-%d %H:%i:%s.%f') AS at,
                  js, HEX(bin) AS bin FROM typed ORDER BY id`,
    );
    expect(
      got.map((r) => ({
        ...r,
        js: typeof r.js === 'string' ? JSON.parse(r.js) : r.js,
        bin: String(r.bin).toLowerCase(),
        amount: String(r.amount),
      })),
    ).toEqual([
      {
        id: third,
        amount: pgSide ? '3.00000000000000000000' : `3.${'0'.repeat(30)}`,
        at: '2026-01-05 00:00:00.000000',
        js: [],
        bin: '03',
      },
      {
        id: top,
        amount: pgSide ? '-0.00000000000000000001' : `-0.${'0'.repeat(19)}1${'0'.repeat(10)}`,
        at: '2026-12-31 23:59:59.999999',
        js: { a: 2 },
        bin: '0001ff',
      },
    ]);
  });

  it('insert mode appends change rows as a changelog, metadata columns and all', async () => {
    const log = t.definition.sink.write(
      t.connection(),
      changes([change('insert', 1, { doc: 'a' }), change('delete', 1)]),
      stepContext({
        kind: 'sink',
        data_source_ref: 'db',
        operation: {
          operation_type: 'sql',
          write: { table: 'changelog', mode: 'insert', create_table: true },
        },
      }),
      base,
    );
    expect((await log).rows).toBe(2);
    const got = await t.query('SELECT _op, _position, id, doc FROM changelog ORDER BY _position');
    expect(got.map((r) => ({ ...r }))).toEqual([
      { _op: 'insert', _position: expect.stringMatching(/^0\//), id: 1, doc: 'a' },
      { _op: 'delete', _position: expect.stringMatching(/^0\//), id: 1, doc: null },
    ]);
  });

  it('applies 10,000 mixed changes equal to a reference computed here (hash of both tables)', async () => {
    await t.query(t.items('bulk'));
    await t.query(t.items('bulk_ref'));
    const random = prng(25);
    const reference = new Map<number, { name: string | null; doc: string; n: number | null }>();
    // A starting state in both tables.
    const start: unknown[][] = [];
    for (let id = 1; id <= 500; id++) {
      reference.set(id, { name: `s${id}`, doc: `doc${id}`, n: id });
      start.push([id, `s${id}`, `doc${id}`, id]);
    }
    await t.load('bulk', start);
    const rows: unknown[][] = [];
    for (let i = 0; i < 10_000; i++) {
      const id = 1 + Math.floor(random() * 1500);
      const has = reference.get(id);
      const r = random();
      if (!has) {
        const row = { name: `n${i}`, doc: `d${i}`, n: i };
        reference.set(id, row);
        rows.push(change('insert', id, row));
      } else if (r < 0.25) {
        reference.delete(id);
        rows.push(change('delete', id));
      } else if (r < 0.5) {
        // doc unchanged: the source did not send it
        const row = { ...has, name: `u${i}`, n: i };
        reference.set(id, row);
        rows.push(change('update', id, { name: row.name, n: row.n }, ['doc']));
      } else {
        const row = { name: r < 0.6 ? null : `v${i}`, doc: `e${i}`, n: r < 0.7 ? null : i };
        reference.set(id, row);
        rows.push(change('update', id, row));
      }
    }
    // Two payloads, each its own commit: a key's changes span both.
    await apply('bulk', changes(rows.slice(0, 6000), 1000), 'bulk:0');
    await apply('bulk', changes(rows.slice(6000), 1000), 'bulk:1');
    await t.load(
      'bulk_ref',
      [...reference.entries()].map(([id, r]) => [id, r.name, r.doc, r.n]),
    );
    const [ref] = await t.query(t.hash('bulk_ref'));
    const [got] = await t.query(t.hash('bulk'));
    expect(Number((await t.query('SELECT COUNT(*) AS c FROM bulk'))[0].c)).toBe(reference.size);
    expect(got.h).toBe(ref.h);
  });
});

describe('sinks without apply', () => {
  it('Snowflake and BigQuery refuse mode apply at validation (their operation schema), naming their modes', () => {
    const op = (mode: string) => ({ operation_type: 'sql', write: { table: 't', mode, key: ['id'] } });
    const refusal = snowflake.sink.operation.safeParse(op('apply'));
    expect(refusal.success).toBe(false);
    expect(refusal.error?.issues[0]).toMatchObject({
      path: ['write', 'mode'],
      message: 'Snowflake sinks take mode insert, upsert, replace',
    });
    expect(snowflake.sink.operation.safeParse(op('upsert')).success).toBe(true);
    expect(snowflake.sink.operation.safeParse({ operation_type: 'sql', sql: 'select 1' }).success).toBe(true);
    expect(bigquery.sink.operation.safeParse(op('apply')).success).toBe(false);
    expect(bigquery.sink.operation.safeParse(op('insert')).success).toBe(true);
  });
});
