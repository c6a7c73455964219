import { randomBytes } from 'node:crypto';
import type { Payload } from '@sluice/engine';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepContext, type TestStep } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import type { PgConnection } from './connect';
import { postgres, postgresConfigSchema } from './index';

// COPY pass-through from a PostgreSQL source into a PostgreSQL sink, on the real server at
// 127.0.0.1:5432: source and target are two scratch databases, removed afterwards.

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const tag = randomBytes(4).toString('hex');
const SRC = `sluice_pt_src_${tag}`;
const DST = `sluice_pt_dst_${tag}`;
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

function connection(database: string): PgConnection {
  const admin = new URL(ADMIN_URL);
  return {
    config: postgresConfigSchema.parse({
      host: admin.hostname,
      port: Number(admin.port || 5432),
      database,
      user: 'postgres',
      allow_private_hosts: true,
    }),
    credentials: { password: 'unused' },
  };
}

const clients: Record<string, pg.Client> = {};
const sql = async (database: string, text: string, values: unknown[] = []) =>
  (await clients[database].query(text, values)).rows;

const source = (query: string, opts: { cursor_column?: string; input?: Record<string, unknown> } = {}) =>
  stepContext(
    {
      kind: 'source',
      data_source_ref: 'src',
      operation: {
        operation_type: 'sql',
        sql: query,
        ...(opts.cursor_column ? { cursor_column: opts.cursor_column } : {}),
      },
    },
    { scope: { runtime: { input: opts.input ?? {} } } },
  );
const sink = (write: Record<string, unknown>) =>
  stepContext({ kind: 'sink', data_source_ref: 'dst', operation: { operation_type: 'sql', write } });
const passedThrough = (step: TestStep) =>
  step.lines.find((l) => l.message.startsWith('pass-through'))?.message ?? null;

/** The payload as it is, noting whether the sink took its native rows framed (`framed()`). */
function watchFramed(payload: Payload) {
  let framed: boolean | undefined;
  const rows = payload as Extract<Payload, { kind: 'rows' }>;
  const native = rows.native!;
  const watched: Payload = {
    ...rows,
    native: {
      ...native,
      open(format, opts) {
        const inner = native.open(format, opts);
        framed = inner.framed;
        return inner;
      },
    },
  };
  return { payload: watched, framed: () => framed };
}

/** Every row of a table as text, in key order: what the two sides must agree on. */
const dump = async (database: string, table: string) =>
  (await sql(database, `SELECT t::text AS r FROM ${table} t ORDER BY 1`)).map((r) => r.r as string);

async function copy(query: string, write: Record<string, unknown>, extra: Partial<ConnectorContext> = {}) {
  const from = source(query);
  const out = await postgres.source.read(connection(SRC), from, ctx);
  const to = sink(write);
  const result = await postgres.sink.write(connection(DST), out.payload, to, { ...ctx, ...extra });
  return { result, to };
}

const TRICKY = 'tab\there\nnew line\r\n"quotes" \'single\' \\backslash\\ \\N ünïcödé 😀, comma';
const COLUMNS = `id int PRIMARY KEY, txt text, js jsonb, arr int[], tags text[], b bytea,
  ts timestamptz, n numeric(20,6), f double precision, d date, ok boolean`;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  for (const db of [SRC, DST]) {
    await admin.query(`CREATE DATABASE ${db}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${db}`;
    clients[db] = new pg.Client({ connectionString: url.toString() });
    await clients[db].connect();
  }
  await admin.end();
  await sql(SRC, `CREATE TABLE tricky (${COLUMNS})`);
  await sql(
    SRC,
    `INSERT INTO tricky VALUES
      (1, $1, '{"a": "x\\ty", "b": [1, null]}', '{1,NULL,3}', '{"a,b","c\\"d",NULL}', '\\x00ff5c0a',
       '2024-02-29 23:59:59.123456+05:30', 12345678901234.123456, 1.5e300, '2024-02-29', true),
      (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
      (3, '', 'null', '{}', '{""}', '\\x', '-infinity', -0.000001, 'NaN', 'infinity', false)`,
    [TRICKY],
  );
  await sql(SRC, 'CREATE TABLE big AS SELECT g AS id, md5(g::text) AS h FROM generate_series(1, 200000) g');
});

afterAll(async () => {
  for (const c of Object.values(clients)) await c.end();
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  for (const db of [SRC, DST]) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin.end();
});

describe('postgres → postgres pass-through', () => {
  it('copies tricky values in binary, exactly, and counts the rows', async () => {
    await sql(DST, `CREATE TABLE t1 (${COLUMNS})`);
    const { result, to } = await copy('SELECT * FROM tricky -- every column', {
      table: 't1',
      mode: 'insert',
    });
    expect(passedThrough(to)).toContain('(binary)');
    expect(result.rows).toBe(3);
    expect(result.bytes).toBeGreaterThan(0);
    expect(await dump(DST, 't1')).toEqual(await dump(SRC, 'tricky'));
  });

  it("ends the source's snapshot once its rows are out, beside the sink's end, when no cursor is read", async () => {
    await sql(DST, 'CREATE TABLE t_snap (id int PRIMARY KEY, h text)');
    const from = source('SELECT * FROM big WHERE id <= 1000');
    const out = await postgres.source.read(connection(SRC), from, ctx);
    const result = await postgres.sink.write(
      connection(DST),
      out.payload,
      sink({ table: 't_snap', mode: 'insert' }),
      ctx,
    );
    expect(result.rows).toBe(1000);
    expect(await out.nextCursor()).toBeNull();
    // The source's session has ended its read-only transaction once its step is done (the
    // session itself may still be closing).
    const open = await sql(
      SRC,
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state <> 'idle'",
      [SRC],
    );
    expect(open[0].n).toBe(0);
    expect((await sql(DST, 'SELECT count(*)::int AS n FROM t_snap'))[0].n).toBe(1000);
  });

  it('creates a missing table and still passes through', async () => {
    const { result, to } = await copy('SELECT id, txt, b, ts, n FROM tricky', {
      table: 't_created',
      mode: 'insert',
      create_table: true,
    });
    expect(passedThrough(to)).not.toBeNull();
    expect(result.rows).toBe(3);
    expect(await dump(DST, 't_created')).toEqual(await dump(SRC, '(SELECT id, txt, b, ts, n FROM tricky)'));
  });

  it('uses text COPY across one type family (int → bigint, text → varchar, numeric → float)', async () => {
    await sql(DST, 'CREATE TABLE t2 (id bigint PRIMARY KEY, txt varchar(200), n double precision)');
    const { result, to } = await copy('SELECT id, txt, n FROM tricky', { table: 't2', mode: 'insert' });
    expect(passedThrough(to)).toContain('(text)');
    expect(result.rows).toBe(3);
    expect(await sql(DST, 'SELECT id, txt, n FROM t2 ORDER BY id')).toEqual([
      { id: '1', txt: TRICKY, n: 12345678901234.123 },
      { id: '2', txt: null, n: null },
      { id: '3', txt: '', n: -0.000001 },
    ]);
  });

  it('takes the decoded rows when the types do not line up (timestamptz into text)', async () => {
    await sql(DST, 'CREATE TABLE t3 (id int, ts text)');
    const { result, to } = await copy('SELECT id, ts FROM tricky WHERE id = 1', {
      table: 't3',
      mode: 'insert',
    });
    expect(passedThrough(to)).toBeNull();
    expect(result.rows).toBe(1);
    expect(await sql(DST, 'SELECT ts FROM t3')).toEqual([{ ts: '2024-02-29 18:29:59.123456+00' }]);
  });

  it('upserts and replaces through a staging table', async () => {
    await sql(DST, 'CREATE TABLE t4 (id int PRIMARY KEY, txt text)');
    await sql(DST, `INSERT INTO t4 VALUES (1, 'old'), (9, 'kept')`);
    const up = await copy('SELECT id, txt FROM tricky', { table: 't4', mode: 'upsert', key: ['id'] });
    expect(passedThrough(up.to)).not.toBeNull();
    expect(up.result.rows).toBe(3);
    expect(await sql(DST, 'SELECT id, txt FROM t4 ORDER BY id')).toEqual([
      { id: 1, txt: TRICKY },
      { id: 2, txt: null },
      { id: 3, txt: '' },
      { id: 9, txt: 'kept' },
    ]);
    const rep = await copy('SELECT id, txt FROM tricky WHERE id > 1', { table: 't4', mode: 'replace' });
    expect(passedThrough(rep.to)).not.toBeNull();
    expect(await sql(DST, 'SELECT id FROM t4 ORDER BY id')).toEqual([{ id: 2 }, { id: 3 }]);
  });

  it('inlines bound templates as typed literals and takes the cursor from the same snapshot', async () => {
    await sql(DST, 'CREATE TABLE t5 (id int, h text)');
    const from = source(
      'SELECT id, h FROM big WHERE id > {{runtime.input.min}} AND h <> {{runtime.input.skip}}; -- done',
      {
        cursor_column: 'id',
        input: { min: 199990, skip: "it's \\ not" },
      },
    );
    const out = await postgres.source.read(connection(SRC), from, ctx);
    const to = sink({ table: 't5', mode: 'insert' });
    const result = await postgres.sink.write(connection(DST), out.payload, to, ctx);
    expect(passedThrough(to)).not.toBeNull();
    expect(result.rows).toBe(10);
    expect(await out.nextCursor()).toBe('200000');
  });

  it("casts inlined templates to the parameters' own types: told at the open when built in, else asked", async () => {
    await sql(SRC, "CREATE TYPE mood AS ENUM ('calm', 'busy')");
    await sql(SRC, 'CREATE TABLE coded (id int, code char(3), m mood)');
    await sql(SRC, "INSERT INTO coded VALUES (1, 'abc', 'calm'), (2, 'abd', 'busy'), (3, 'a', 'calm')");
    // The PREPAREs this process sends (the source's round trip for its parameters' types), alone
    // or among statements sent at once.
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const q = args[0] as string | { text?: string; statements?: string[] };
      const texts = typeof q === 'string' ? [q] : (q?.statements ?? [q?.text ?? '']);
      sent.push(...texts.filter((t) => t.startsWith('PREPARE')));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      const read = async (text: string, input: Record<string, unknown>, table: string) => {
        await sql(DST, `CREATE TABLE ${table} (id int, code char(3))`);
        const out = await postgres.source.read(connection(SRC), source(text, { input }), ctx);
        const to = sink({ table, mode: 'insert' });
        const result = await postgres.sink.write(connection(DST), out.payload, to, ctx);
        expect(passedThrough(to)).not.toBeNull();
        return result.rows;
      };
      // char(3): a cast to `character` would cut 'abc' to 'a' and find row 3 instead.
      expect(
        await read('SELECT id, code FROM coded WHERE code = {{runtime.input.c}}', { c: 'abc' }, 't_char'),
      ).toBe(1);
      expect(await sql(DST, 'SELECT id FROM t_char')).toEqual([{ id: 1 }]);
      expect(sent).toEqual([]);
      // An enum is the source's own type: the server names it, and the char(3) beside it too.
      const both = 'SELECT id, code FROM coded WHERE code = {{runtime.input.c}} AND m = {{runtime.input.m}}';
      expect(await read(both, { c: 'abd', m: 'busy' }, 't_enum')).toBe(1);
      expect(await sql(DST, 'SELECT id FROM t_enum')).toEqual([{ id: 2 }]);
      expect(sent).toHaveLength(1);
    } finally {
      pg.Client.prototype.query = query;
    }
  });

  it('takes the cursor from the rows it copied, without running the query again', async () => {
    await sql(DST, 'CREATE TABLE t5b (id int, seen timestamptz, n bigint)');
    // clock_timestamp() moves on every call: a second run of the query for max() would answer a
    // later time than any row copied.
    const from = source(
      'SELECT id, clock_timestamp() AS seen, id::bigint * 1000000007 AS n FROM big WHERE id <= 50000',
      { cursor_column: 'seen' },
    );
    const out = await postgres.source.read(connection(SRC), from, ctx);
    const to = sink({ table: 't5b', mode: 'insert' });
    // The source's CopyData messages go through as they are, the cursor read inside them.
    const watched = watchFramed(out.payload);
    const result = await postgres.sink.write(connection(DST), watched.payload, to, ctx);
    expect(passedThrough(to)).toContain('(binary)');
    expect(watched.framed()).toBe(true);
    expect(result.rows).toBe(50000);
    const [{ latest }] = await sql(DST, 'SELECT max(seen) AS latest FROM t5b');
    const cursor = await out.nextCursor();
    expect(new Date(cursor!).getTime()).toBe((latest as Date).getTime());
    expect(cursor).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+[+-]\d{2}/);

    const byNumber = source('SELECT id, h FROM big WHERE id <= 1234', { cursor_column: 'id' });
    const again = await postgres.source.read(connection(SRC), byNumber, ctx);
    await sql(DST, 'CREATE TABLE t5c (id int, h text)');
    await postgres.sink.write(connection(DST), again.payload, sink({ table: 't5c', mode: 'insert' }), ctx);
    expect(await again.nextCursor()).toBe('1234');

    const byNumeric = source('SELECT id, id::numeric / 7 AS n FROM big WHERE id <= 777', {
      cursor_column: 'n',
    });
    const third = await postgres.source.read(connection(SRC), byNumeric, ctx);
    await sql(DST, 'CREATE TABLE t5d (id int, n numeric)');
    const t5d = sink({ table: 't5d', mode: 'insert' });
    await postgres.sink.write(connection(DST), third.payload, t5d, ctx);
    expect(passedThrough(t5d)).toContain('(binary)');
    const [{ want }] = await sql(SRC, 'SELECT max(id::numeric / 7)::text AS want FROM big WHERE id <= 777');
    expect(await third.nextCursor()).toBe(want);
  });

  it('commits nothing when the run is canceled mid-copy', async () => {
    await sql(DST, 'CREATE TABLE t6 (id int, h text)');
    const from = source('SELECT id, h FROM big');
    const out = await postgres.source.read(connection(SRC), from, ctx);
    const payload = out.payload as Extract<Payload, { kind: 'rows' }>;
    const to = sink({ table: 't6', mode: 'insert' });
    // Cancel once the second chunk is on its way: the COPY has begun on both sides.
    const native = payload.native!;
    const stopping: Payload = {
      ...payload,
      native: {
        ...native,
        open(format, opts) {
          const inner = native.open(format, opts);
          return {
            rows: inner.rows,
            framed: inner.framed,
            chunks: (async function* () {
              let n = 0;
              for await (const c of inner.chunks) {
                yield c;
                if (++n === 2) {
                  to.controller.abort();
                  from.controller.abort();
                }
              }
            })(),
          };
        },
      },
    };
    const err = await postgres.sink.write(connection(DST), stopping, to, ctx).then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(ConnectorError);
    expect((err as ConnectorError).code).toBe('TIMEOUT');
    expect(await sql(DST, 'SELECT count(*)::int AS n FROM t6')).toEqual([{ n: 0 }]);
  });

  it('writes nothing twice when a retried run finds its commit in the ledger', async () => {
    await sql(DST, 'CREATE TABLE t7 (id int, h text)');
    const key = `run-pt:${tag}:sink`;
    const first = await copy(
      'SELECT id, h FROM big WHERE id <= 1000',
      { table: 't7', mode: 'insert' },
      { commitKey: key },
    );
    expect(first.result.rows).toBe(1000);
    const again = await copy(
      'SELECT id, h FROM big WHERE id <= 1000',
      { table: 't7', mode: 'insert' },
      { commitKey: key },
    );
    expect(again.result).toEqual(first.result);
    expect(await sql(DST, 'SELECT count(*)::int AS n FROM t7')).toEqual([{ n: 1000 }]);
  });
});
