import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresCluster } from '../../../../../test/peers/postgres-cluster';
import { clusterConnection, startCdcCluster } from '../../../../../test/support/cdc-cluster';
import { collect, stepContext } from '../../../../../test/support/step-context';
import { egressPolicy } from '../../egress';
import { type ConnectorContext, defaultLimits } from '../../types';
import type { PgConnection } from '../connect';
import { postgres } from '../index';
import { normalLsn } from './lsn';

// The PostgreSQL change capture on its own cluster with wal_level=logical (docs/cdc.md): each
// read is one run; the rows are applied by key to a map the way an `apply` sink would, and the
// map is compared with the source table.

const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
const changes = postgres.changes;

let cluster: PostgresCluster;
let db: pg.Client;
let conn: PgConnection;
const sql = async (text: string, values: unknown[] = []) => (await db.query(text, values)).rows;

beforeAll(async () => {
  cluster = await startCdcCluster();
  db = new pg.Client({ connectionString: cluster.url });
  await db.connect();
  conn = clusterConnection(cluster);
});

afterAll(async () => {
  await db?.end();
  await cluster?.destroy();
});

type Read = { rows: Record<string, unknown>[]; cursor: string | null; columns: string[] };
let runs = 0;

async function read(
  capture: string,
  op: Record<string, unknown>,
  cursor: string | null,
  opts: { run?: string; attempt?: number; onCapturedSchema?: ConnectorContext['onCapturedSchema'] } = {},
): Promise<Read> {
  const step = stepContext(
    { kind: 'source', data_source_ref: 'db', operation: { operation_type: 'cdc', ...op } },
    { cursor },
  );
  const run = opts.run ?? `run-${++runs}`;
  const out = await changes.read(conn, { ...step, runSlug: run }, capture, {
    ...ctx,
    attempt: opts.attempt ?? 1,
    onCapturedSchema: opts.onCapturedSchema,
  });
  if (out.payload.kind !== 'rows') throw new Error('rows expected');
  const columns = out.payload.columns.map((c) => c.name);
  const { items } = await collect(out.payload);
  const rows = (items as unknown[][]).map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])));
  return { rows, cursor: await out.nextCursor(), columns };
}

/** Applies change rows by key, keeping a column's value when the change did not send it. */
function apply(target: Map<string, Record<string, unknown>>, rows: Record<string, unknown>[], key = 'id') {
  for (const r of rows) {
    const k = `${r._table}:${r[key]}`;
    if (r._op === 'truncate') {
      for (const t of [...target.keys()]) if (t.startsWith(`${r._table}:`)) target.delete(t);
      continue;
    }
    if (r._op === 'delete') {
      target.delete(k);
      continue;
    }
    const unchanged = new Set((r._unchanged as string[] | null) ?? []);
    const prev = target.get(k) ?? {};
    const next: Record<string, unknown> = { ...prev };
    for (const [c, v] of Object.entries(r)) if (!c.startsWith('_') && !unchanged.has(c)) next[c] = v;
    target.set(k, next);
  }
}

/** Drains the capture: runs until a run hands on nothing. */
async function drain(
  capture: string,
  op: Record<string, unknown>,
  cursor: string | null,
  target: Map<string, Record<string, unknown>>,
) {
  let reads = 0;
  for (;;) {
    const r = await read(capture, op, cursor);
    reads++;
    apply(target, r.rows);
    cursor = r.cursor;
    if (r.rows.length === 0) return { cursor, reads };
  }
}

async function sourceRows(table: string, columns = '*') {
  const rows = await sql(`SELECT ${columns} FROM ${table} ORDER BY id`);
  return rows.map((r) => JSON.parse(JSON.stringify(r)));
}
const targetRows = (target: Map<string, Record<string, unknown>>, table: string, columns: string[]) =>
  [...target.entries()]
    .filter(([k]) => k.startsWith(`${table}:`))
    .map(([, v]) => Object.fromEntries(columns.map((c) => [c, v[c]])))
    .sort((a, b) => Number(a.id) - Number(b.id));

describe('PostgreSQL change capture', () => {
  it('refuses a table without a key or replica identity at check, naming the fix', async () => {
    await sql('CREATE TABLE public.nokey (a int, b text)');
    await sql('CREATE TABLE public.haskey (id int PRIMARY KEY)');
    const findings = await changes.check(
      conn,
      {
        operation_type: 'cdc',
        tables: ['public.nokey', 'public.haskey', 'public.absent'],
        snapshot: 'initial',
        max_changes: 10,
        max_seconds: 10,
      },
      ctx,
    );
    expect(findings.map((f) => [f.table, f.code])).toEqual([
      ['public.nokey', 'CDC_TABLE_NO_KEY'],
      ['public.absent', 'CDC_TABLE_NOT_FOUND'],
    ]);
    expect(findings[0].message).toContain('ALTER TABLE "public"."nokey" REPLICA IDENTITY FULL');
    await sql('ALTER TABLE public.nokey REPLICA IDENTITY FULL');
    const after = await changes.check(
      conn,
      {
        operation_type: 'cdc',
        tables: ['public.nokey'],
        snapshot: 'initial',
        max_changes: 10,
        max_seconds: 10,
      },
      ctx,
    );
    expect(after).toEqual([]);
  });

  it('snapshot then stream under concurrent writes: no gap, no duplicate', async () => {
    await sql('CREATE TABLE public.orders (id int PRIMARY KEY, qty int NOT NULL, note text)');
    await sql(`INSERT INTO public.orders SELECT g, g, 'n' || g FROM generate_series(1, 3000) g`);
    const op = { tables: ['public.orders'], max_changes: 1000 };
    // Writers keep going while the snapshot is being copied over several runs.
    let writing = true;
    let n = 3000;
    const writer = (async () => {
      const w = new pg.Client({ connectionString: cluster.url });
      await w.connect();
      while (writing) {
        n++;
        await w.query('BEGIN');
        await w.query('INSERT INTO public.orders VALUES ($1, $1, $2)', [n, `w${n}`]);
        await w.query('UPDATE public.orders SET qty = qty + 1 WHERE id = $1', [((n * 7) % 3000) + 1]);
        await w.query('DELETE FROM public.orders WHERE id = $1', [((n * 13) % 3000) + 1]);
        await w.query('COMMIT');
      }
      await w.end();
    })();
    const target = new Map<string, Record<string, unknown>>();
    let cursor: string | null = null;
    for (let i = 0; i < 6; i++) {
      const r = await read('sluice_gap', op, cursor);
      apply(target, r.rows);
      cursor = r.cursor;
    }
    writing = false;
    await writer;
    const done = await drain('sluice_gap', op, cursor, target);
    const cols = ['id', 'qty', 'note'];
    expect(targetRows(target, 'public.orders', cols)).toEqual(
      await sourceRows('public.orders', cols.join(', ')),
    );
    expect(n).toBeGreaterThan(3000);
    expect(JSON.parse(done.cursor!).snapshot).toBeNull();
  });

  it('keeps exact values, unchanged TOAST values, delete keys and commit order', async () => {
    await sql(`CREATE TABLE public.typed (id bigint PRIMARY KEY, amount numeric(30,10), at timestamptz, doc jsonb,
                 tags text[], bin bytea, big text)`);
    const op = { tables: ['public.typed'], max_changes: 1000 };
    const first = await read('sluice_typed', op, null);
    expect(first.rows).toEqual([]);
    // Incompressible, so it is stored out of line (TOAST) and not sent again when unchanged.
    const big = randomBytes(50_000).toString('hex');
    await sql(
      `INSERT INTO public.typed VALUES (9007199254740993, 12345678901234567890.0123456789,
                 '2024-02-29 23:59:59.123456+00', '{"a": [1, 2.50]}', '{a,"b c"}', '\\x00ff', $1)`,
      [big],
    );
    await sql('UPDATE public.typed SET amount = 1.5 WHERE id = 9007199254740993');
    // Two transactions: the second commits first.
    const a = new pg.Client({ connectionString: cluster.url });
    const b = new pg.Client({ connectionString: cluster.url });
    await a.connect();
    await b.connect();
    await a.query('BEGIN');
    await a.query(`INSERT INTO public.typed (id) VALUES (2)`);
    await b.query('BEGIN');
    await b.query(`INSERT INTO public.typed (id) VALUES (3)`);
    await b.query('COMMIT');
    await a.query('COMMIT');
    await a.end();
    await b.end();
    await sql('DELETE FROM public.typed WHERE id = 3');
    const r = await read('sluice_typed', op, first.cursor);
    expect(r.rows.map((x) => [x._op, x.id])).toEqual([
      ['insert', '9007199254740993'],
      ['update', '9007199254740993'],
      ['insert', '3'],
      ['insert', '2'],
      ['delete', '3'],
    ]);
    const [ins, upd] = r.rows;
    expect(ins.amount).toBe('12345678901234567890.0123456789');
    expect(ins.at).toBe('2024-02-29 23:59:59.123456+00');
    expect(ins.doc).toEqual({ a: [1, 2.5] });
    expect(ins.tags).toEqual(['a', 'b c']);
    expect(Buffer.from(ins.bin as Buffer).toString('hex')).toBe('00ff');
    expect(ins.big).toBe(big);
    expect(ins._unchanged).toBeNull();
    // The big value was not sent with the update: listed, never null-as-value.
    expect(upd.amount).toBe('1.5000000000');
    expect(upd._unchanged).toEqual(['big']);
    expect(upd.big).toBeNull();
    expect(String(upd._committed_at)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const target = new Map<string, Record<string, unknown>>();
    apply(target, [...first.rows, ...r.rows]);
    expect(target.get('public.typed:9007199254740993')?.big).toBe(big);
    expect(target.has('public.typed:3')).toBe(false);
    // With REPLICA IDENTITY FULL the old row carries the value.
    await sql('ALTER TABLE public.typed REPLICA IDENTITY FULL');
    await sql('UPDATE public.typed SET amount = 2 WHERE id = 9007199254740993');
    const full = await read('sluice_typed', op, r.cursor);
    expect(full.rows[0].big).toBe(big);
    expect(full.rows[0]._unchanged).toBeNull();
  });

  it('hands on a truncate in order as a truncate row per captured table', async () => {
    await sql('CREATE TABLE public.cut_a (id int PRIMARY KEY, v text)');
    await sql('CREATE TABLE public.cut_b (id int PRIMARY KEY, v text)');
    await sql('CREATE TABLE public.cut_other (id int PRIMARY KEY)');
    await sql(`INSERT INTO public.cut_a VALUES (1, 'snap')`);
    const op = { tables: ['public.cut_a', 'public.cut_b'], max_changes: 1000 };
    const target = new Map<string, Record<string, unknown>>();
    const first = await read('sluice_cut', op, null);
    apply(target, first.rows);
    await sql(`INSERT INTO public.cut_a VALUES (2, 'before')`);
    await sql(`INSERT INTO public.cut_b VALUES (1, 'b')`);
    await sql('TRUNCATE public.cut_a');
    await sql(`INSERT INTO public.cut_a VALUES (3, 'after')`);
    // One statement, two captured tables and one that is not captured.
    await sql('TRUNCATE public.cut_b, public.cut_other');
    const r = await read('sluice_cut', op, first.cursor);
    expect(r.rows.map((x) => [x._op, x._table, x.id])).toEqual([
      ['insert', 'public.cut_a', 2],
      ['insert', 'public.cut_b', 1],
      ['truncate', 'public.cut_a', null],
      ['insert', 'public.cut_a', 3],
      ['truncate', 'public.cut_b', null],
    ]);
    const cut = r.rows[2];
    expect(cut.v).toBeNull();
    expect(cut._unchanged).toBeNull();
    expect(String(cut._committed_at)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(String(cut._position)).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    apply(target, r.rows);
    expect(targetRows(target, 'public.cut_a', ['id', 'v'])).toEqual(
      await sourceRows('public.cut_a', 'id, v'),
    );
    expect(targetRows(target, 'public.cut_b', ['id', 'v'])).toEqual([]);
  });

  it('a column changed during a run is reported then; a broken contract stops the read, the slot unmoved', async () => {
    await sql('CREATE TABLE public.midrun (id int PRIMARY KEY, qty int)');
    const op = { tables: ['public.midrun'], max_changes: 1000 };
    const first = await read('sluice_midrun', op, null);
    await sql('INSERT INTO public.midrun VALUES (1, 1)');
    type Seen = Parameters<NonNullable<ConnectorContext['onCapturedSchema']>>[0];
    const columnsOf = (tables: Seen) => tables[0].columns?.map((c) => `${c.name} ${c.type}`);
    // The DDL commits after the run described the tables (its first report) and before it
    // marks where it stops: the stream describes the table anew before the next change.
    const during = (ddl: string[], refuse: boolean) => {
      const seen: Seen[] = [];
      const hook = async (tables: Seen) => {
        seen.push(tables);
        if (seen.length === 1) for (const statement of ddl) await sql(statement);
        else if (refuse)
          throw Object.assign(new Error('contract broken: qty is promised as integer'), {
            code: 'CONTRACT_BROKEN',
          });
      };
      return { seen, hook };
    };
    const added = during(
      ['ALTER TABLE public.midrun ADD COLUMN vip boolean', 'INSERT INTO public.midrun VALUES (2, 2, true)'],
      false,
    );
    const r = await read('sluice_midrun', op, first.cursor, { onCapturedSchema: added.hook });
    expect(added.seen.map(columnsOf)).toEqual([
      ['id integer', 'qty integer'],
      ['id integer', 'qty integer', 'vip boolean'],
    ]);
    expect(r.rows.map((x) => [x._op, x.id, x.qty])).toEqual([
      ['insert', 1, 1],
      ['insert', 2, 2],
    ]);

    // A contracted column retyped during the run: the read fails with the server's answer as it
    // is, hands on no position, and the slot stays at the committed one.
    await sql('INSERT INTO public.midrun VALUES (3, 3, false)');
    const retyped = during(
      [
        'ALTER TABLE public.midrun ALTER COLUMN qty TYPE text',
        `INSERT INTO public.midrun VALUES (4, 'four', true)`,
      ],
      true,
    );
    const err = await read('sluice_midrun', op, r.cursor, { onCapturedSchema: retyped.hook }).then(
      () => null,
      (e) => e,
    );
    expect(err?.code).toBe('CONTRACT_BROKEN');
    expect(err?.message).toContain('qty is promised as integer');
    expect(columnsOf(retyped.seen[1])).toEqual(['id integer', 'qty text', 'vip boolean']);
    const [{ same }] = await sql(
      `SELECT confirmed_flush_lsn = $1::pg_lsn AS same FROM pg_replication_slots WHERE slot_name = 'sluice_midrun'`,
      [JSON.parse(r.cursor as string).lsn],
    );
    expect(same).toBe(true);
    // Fixed (or the contract revised): the next run reads from the same position, nothing lost.
    const again = await read('sluice_midrun', op, r.cursor);
    expect(again.rows.map((x) => [x._op, x.id, x.qty])).toEqual([
      ['insert', 3, 3],
      ['insert', 4, 'four'],
    ]);
  });

  it('the stream holds while a new shape is checked: nothing after it is handed on before the answer', async () => {
    await sql('CREATE TABLE public.heldshape (id int PRIMARY KEY, qty int)');
    const op = { tables: ['public.heldshape'], max_changes: 100_000 };
    const first = await read('sluice_heldshape', op, null);
    type Seen = Parameters<NonNullable<ConnectorContext['onCapturedSchema']>>[0];
    const columnsOf = (tables: Seen) => tables[0].columns?.map((c) => `${c.name} ${c.type}`);
    const fill = (from: number, to: number, qty: string) =>
      `INSERT INTO public.heldshape SELECT g, ${qty} FROM generate_series(${from}, ${to}) g`;

    // 12,000 changes in the old shape (two whole batches and part of a third), then a DDL and
    // 12,000 more, committed after the run described the table. The check of the new shape
    // waits until the consumer took every whole batch before it, then looks at what it got.
    async function readHeld(cursor: string | null, ddl: string[], refuse: boolean) {
      const seen: Seen[] = [];
      const ids: number[] = [];
      let atAnswer: number[] | null = null;
      const hook = async (tables: Seen) => {
        seen.push(tables);
        if (seen.length === 1) {
          for (const statement of ddl) await sql(statement);
          return;
        }
        for (let waited = 0; ids.length < 10_000; waited += 10) {
          if (waited > 60_000) throw new Error(`the consumer got only ${ids.length} rows`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        // Room for the stream to hand on more, were it not holding.
        await new Promise((resolve) => setTimeout(resolve, 200));
        atAnswer = [...ids];
        if (refuse)
          throw Object.assign(new Error('contract broken: qty is promised as integer'), {
            code: 'CONTRACT_BROKEN',
          });
      };
      const step = stepContext(
        { kind: 'source', data_source_ref: 'db', operation: { operation_type: 'cdc', ...op } },
        { cursor },
      );
      const out = await changes.read(conn, { ...step, runSlug: `run-${++runs}` }, 'sluice_heldshape', {
        ...ctx,
        onCapturedSchema: hook,
      });
      if (out.payload.kind !== 'rows') throw new Error('rows expected');
      const id = out.payload.columns.findIndex((c) => c.name === 'id');
      let error: any = null;
      try {
        for await (const batch of out.payload.batches as AsyncIterable<unknown[][]>)
          for (const row of batch) ids.push(row[id] as number);
      } catch (err) {
        error = err;
      }
      return {
        seen,
        ids,
        atAnswer: atAnswer as number[] | null,
        error,
        cursor: error ? null : await out.nextCursor(),
      };
    }

    await sql(fill(1, 12_000, 'g'));
    const added = await readHeld(
      first.cursor,
      ['ALTER TABLE public.heldshape ADD COLUMN vip boolean', fill(12_001, 24_000, 'g')],
      false,
    );
    expect(added.error).toBeNull();
    expect(added.seen.map(columnsOf)).toEqual([
      ['id integer', 'qty integer'],
      ['id integer', 'qty integer', 'vip boolean'],
    ]);
    expect(added.atAnswer?.length).toBe(10_000);
    expect(Math.max(...(added.atAnswer ?? []))).toBeLessThanOrEqual(12_000);
    expect(added.ids).toEqual(Array.from({ length: 24_000 }, (_, i) => i + 1));

    // Refused: the read fails with the check's error, none of the later changes was handed on,
    // and the slot stays at the committed position.
    await sql(`UPDATE public.heldshape SET qty = -qty WHERE id <= 12000`);
    const refused = await readHeld(
      added.cursor,
      [
        'ALTER TABLE public.heldshape ALTER COLUMN qty TYPE text',
        `UPDATE public.heldshape SET qty = 'x' WHERE id > 12000`,
      ],
      true,
    );
    expect(refused.error?.code).toBe('CONTRACT_BROKEN');
    expect(refused.ids.length).toBe(10_000);
    expect(Math.max(...refused.ids)).toBeLessThanOrEqual(12_000);
    const [{ same }] = await sql(
      `SELECT confirmed_flush_lsn = $1::pg_lsn AS same FROM pg_replication_slots WHERE slot_name = 'sluice_heldshape'`,
      [JSON.parse(added.cursor as string).lsn],
    );
    expect(same).toBe(true);
  });

  it('a table added to the capture later is copied once, the others are not; a removed one is no longer read', async () => {
    await sql('CREATE TABLE public.grow_a (id int PRIMARY KEY, v text)');
    await sql('CREATE TABLE public.grow_b (id int PRIMARY KEY, v text)');
    await sql(`INSERT INTO public.grow_a VALUES (1, 'a1')`);
    await sql(`INSERT INTO public.grow_b VALUES (10, 'b10')`);
    const one = { tables: ['public.grow_a'], max_changes: 1000 };
    const both = { tables: ['public.grow_a', 'public.grow_b'], max_changes: 1000 };
    const target = new Map<string, Record<string, unknown>>();
    const first = await drain('sluice_grow', one, null, target);
    expect(targetRows(target, 'public.grow_a', ['id', 'v'])).toEqual([{ id: 1, v: 'a1' }]);
    await sql(`INSERT INTO public.grow_a VALUES (2, 'a2')`);
    await sql(`INSERT INTO public.grow_b VALUES (20, 'b20')`);

    // The new version lists grow_b: its rows are copied first, then the changes of both follow.
    const added = await read('sluice_grow', both, first.cursor);
    expect(added.rows.map((x) => [x._op, x._table, x.id])).toEqual([
      ['insert', 'public.grow_b', 10],
      ['insert', 'public.grow_b', 20],
      ['insert', 'public.grow_a', 2],
    ]);
    apply(target, added.rows);
    expect(JSON.parse(added.cursor as string).tables).toEqual(both.tables);
    await sql(`UPDATE public.grow_b SET v = 'b10!' WHERE id = 10`);
    const next = await read('sluice_grow', both, added.cursor);
    expect(next.rows.map((x) => [x._op, x._table, x.id])).toEqual([['update', 'public.grow_b', 10]]);
    apply(target, next.rows);
    for (const t of ['public.grow_a', 'public.grow_b'])
      expect(targetRows(target, t, ['id', 'v'])).toEqual(await sourceRows(t, 'id, v'));

    // Dropped from the list again: its changes are no longer handed on.
    await sql(`INSERT INTO public.grow_a VALUES (3, 'a3')`);
    await sql(`INSERT INTO public.grow_b VALUES (30, 'b30')`);
    const fewer = await read('sluice_grow', { ...both, tables: ['public.grow_b'] }, next.cursor);
    expect(fewer.rows.map((x) => [x._op, x._table, x.id])).toEqual([['insert', 'public.grow_b', 30]]);
  });

  it('a captured table dropped and created again, or taken out of the publication, is refused until a reset', async () => {
    await sql('CREATE TABLE public.gap_a (id int PRIMARY KEY, v text)');
    await sql('CREATE TABLE public.gap_b (id int PRIMARY KEY, v text)');
    await sql(`INSERT INTO public.gap_a VALUES (1, 'a1')`);
    await sql(`INSERT INTO public.gap_b VALUES (1, 'b1')`);
    const op = { tables: ['public.gap_a', 'public.gap_b'], max_changes: 1000 };
    const first = await drain('sluice_gap', op, null, new Map());

    // Recreated between runs: the rows written before the next run were never published.
    await sql('DROP TABLE public.gap_a');
    await sql('CREATE TABLE public.gap_a (id int PRIMARY KEY, v text)');
    await sql(`INSERT INTO public.gap_a VALUES (2, 'a2')`);
    const published = async () =>
      (await sql(`SELECT tablename FROM pg_publication_tables WHERE pubname = 'sluice_gap' ORDER BY 1`)).map(
        (r) => r.tablename,
      );
    for (let i = 0; i < 2; i++) {
      // Refused every time, and the publication is left as it was (nothing repaired silently).
      await expect(read('sluice_gap', op, first.cursor)).rejects.toMatchObject({
        code: 'REMOTE_ERROR',
        message: expect.stringMatching(
          /publication sluice_gap no longer lists public\.gap_a: .*reset the pipeline's checkpoints/,
        ),
      });
      expect(await published()).toEqual(['gap_b']);
    }
    // A reset (no committed position) takes a new snapshot, and the capture reads on.
    const again = new Map<string, Record<string, unknown>>();
    const reset = await drain('sluice_gap', op, null, again);
    expect(targetRows(again, 'public.gap_a', ['id', 'v'])).toEqual([{ id: 2, v: 'a2' }]);

    // Taken out of the publication by hand: the same refusal. A table the new version stops
    // listing is not covered any more, so it is no gap.
    await sql('ALTER PUBLICATION sluice_gap DROP TABLE public.gap_b');
    await sql(`INSERT INTO public.gap_b VALUES (2, 'b2')`);
    await expect(read('sluice_gap', op, reset.cursor)).rejects.toMatchObject({
      message: expect.stringContaining('publication sluice_gap no longer lists public.gap_b'),
    });
    await sql(`INSERT INTO public.gap_a VALUES (3, 'a3')`);
    const fewer = await read('sluice_gap', { ...op, tables: ['public.gap_a'] }, reset.cursor);
    expect(fewer.rows.map((x) => [x._op, x._table, x.id])).toEqual([['insert', 'public.gap_a', 3]]);
  });

  it('drains a 10,000-change backlog over bounded runs, and a quiet database still moves the slot', async () => {
    await sql('CREATE TABLE public.backlog (id int PRIMARY KEY, v int)');
    await sql('CREATE TABLE public.elsewhere (id int)');
    const op = { tables: ['public.backlog'], max_changes: 3000 };
    const first = await read('sluice_backlog', op, null);
    for (let i = 0; i < 10; i++) {
      await sql(
        `INSERT INTO public.backlog SELECT g, 0 FROM generate_series($1::int * 1000 + 1, $1::int * 1000 + 1000) g`,
        [i],
      );
    }
    const target = new Map<string, Record<string, unknown>>();
    const sizes: number[] = [];
    let cursor = first.cursor;
    for (;;) {
      const r = await read('sluice_backlog', op, cursor);
      sizes.push(r.rows.length);
      apply(target, r.rows);
      cursor = r.cursor;
      if (r.rows.length === 0) break;
    }
    // Transactions of 1,000 changes: a run stops after the one that reaches 3,000.
    expect(sizes).toEqual([3000, 3000, 3000, 1000, 0]);
    expect(target.size).toBe(10_000);
    // Other tables write WAL; the captured one stays quiet: the position still moves.
    const before = JSON.parse(cursor!).lsn;
    await sql('INSERT INTO public.elsewhere SELECT g FROM generate_series(1, 10000) g');
    const quiet = await read('sluice_backlog', op, cursor);
    expect(quiet.rows).toEqual([]);
    const lsnOf = (t: string) => BigInt(`0x${t.split('/')[0]}`) * 2n ** 32n + BigInt(`0x${t.split('/')[1]}`);
    expect(lsnOf(JSON.parse(quiet.cursor!).lsn)).toBeGreaterThan(lsnOf(before));
    await read('sluice_backlog', op, quiet.cursor);
    const slot = await sql(
      `SELECT confirmed_flush_lsn::text AS c FROM pg_replication_slots WHERE slot_name = 'sluice_backlog'`,
    );
    expect(lsnOf(slot[0].c)).toBeGreaterThanOrEqual(lsnOf(JSON.parse(quiet.cursor!).lsn));
  });

  it('a streaming read confirms nothing past the committed position, even when stopped early', async () => {
    await sql('CREATE TABLE public.confirm (id int PRIMARY KEY, v int)');
    const op = { tables: ['public.confirm'], snapshot: 'never', max_changes: 1_000_000 };
    const first = await read('sluice_confirm', op, null);
    const committed = normalLsn(JSON.parse(first.cursor!).lsn);
    // More changes than the read decodes ahead of its consumer.
    for (let i = 0; i < 10; i++) {
      await sql(
        `INSERT INTO public.confirm SELECT g, 0 FROM generate_series($1::int * 5000 + 1, $1::int * 5000 + 5000) g`,
        [i],
      );
    }
    const slotNow = async () =>
      (
        await sql(
          `SELECT active, confirmed_flush_lsn::text AS c FROM pg_replication_slots WHERE slot_name = 'sluice_confirm'`,
        )
      )[0] as { active: boolean; c: string };
    const stepOf = (cursor: string) =>
      stepContext(
        { kind: 'source', data_source_ref: 'db', operation: { operation_type: 'cdc', ...op } },
        { cursor },
      );
    // A consumer that takes one batch and goes away: the session ends, the slot is free and
    // still at the committed position.
    const early = await changes.read(
      conn,
      { ...stepOf(first.cursor!), runSlug: 'early' },
      'sluice_confirm',
      ctx,
    );
    if (early.payload.kind !== 'rows') throw new Error('rows expected');
    const it = early.payload.batches[Symbol.asyncIterator]();
    const one = await it.next();
    expect((one.value as unknown[][]).length).toBeGreaterThan(0);
    expect(await slotNow()).toEqual({ active: true, c: committed });
    await it.return?.(undefined);
    expect(await slotNow()).toEqual({ active: false, c: committed });
    // A whole read: every change, and still nothing confirmed until the next read starts from it.
    const all = await read('sluice_confirm', op, first.cursor);
    expect(all.rows).toHaveLength(50_000);
    expect(new Set(all.rows.map((r) => r.id)).size).toBe(50_000);
    expect(await slotNow()).toEqual({ active: false, c: committed });
    const next = await read('sluice_confirm', op, all.cursor);
    expect(next.rows).toEqual([]);
    expect((await slotNow()).c).toBe(normalLsn(JSON.parse(all.cursor!).lsn));
  });

  it('a later attempt of a run repeats exactly what the lost attempt handed on', async () => {
    await sql('CREATE TABLE public.retry (id int PRIMARY KEY, v text)');
    await sql(`INSERT INTO public.retry SELECT g, 's' FROM generate_series(1, 50) g`);
    const op = { tables: ['public.retry'], max_changes: 30 };
    // A snapshot part, then its attempt 2 after more writes.
    const one = await read('sluice_retry', op, null, { run: 'r1' });
    await sql(`UPDATE public.retry SET v = 'changed' WHERE id <= 10`);
    const oneAgain = await read('sluice_retry', op, null, { run: 'r1', attempt: 2 });
    expect(oneAgain.cursor).toBe(one.cursor);
    expect(oneAgain.rows.map((r) => r.id)).toEqual(one.rows.map((r) => r.id));
    const two = await read('sluice_retry', op, one.cursor, { run: 'r2' });
    expect(two.rows.map((r) => r.id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 31));
    // A changes run, then its attempt 2 after more changes: the same changes, the same position.
    const three = await read('sluice_retry', op, two.cursor, { run: 'r3' });
    expect(three.rows.filter((r) => r._op === 'update')).toHaveLength(10);
    await sql(`INSERT INTO public.retry VALUES (100, 'late')`);
    const threeAgain = await read('sluice_retry', op, two.cursor, { run: 'r3', attempt: 2 });
    expect(threeAgain.cursor).toBe(three.cursor);
    expect(threeAgain.rows).toEqual(three.rows);
    const four = await read('sluice_retry', op, three.cursor, { run: 'r4' });
    expect(four.rows.map((r) => [r._op, r.id])).toEqual([['insert', 100]]);
  });

  it('a slot survives a restart of the source, and lists and releases', async () => {
    await sql('CREATE TABLE public.restart (id int PRIMARY KEY)');
    const op = { tables: ['public.restart'], max_changes: 100 };
    const first = await read('sluice_restart', op, null);
    await sql('INSERT INTO public.restart VALUES (1), (2)');
    await db.end();
    await cluster.stop('immediate');
    await cluster.start();
    db = new pg.Client({ connectionString: cluster.url });
    await db.connect();
    await sql('INSERT INTO public.restart VALUES (3)');
    const r = await read('sluice_restart', op, first.cursor);
    expect(r.rows.map((x) => x.id)).toEqual([1, 2, 3]);
    const listed = await changes.captures(conn, 'sluice_restart', ctx);
    expect(listed.map((c) => c.name)).toEqual(['sluice_restart']);
    expect(listed[0].lag_bytes).toBeGreaterThan(0);
    await changes.release(conn, 'sluice_restart', ctx);
    await changes.release(conn, 'sluice_restart', ctx);
    expect(await changes.captures(conn, 'sluice_restart', ctx)).toEqual([]);
    const gone = await read('sluice_restart', op, r.cursor).then(
      () => null,
      (e) => e,
    );
    expect(gone?.message).toMatch(/no longer exists.*reset the pipeline's checkpoints/);
  });
});

describe('PostgreSQL change capture with a least-privilege role', () => {
  it('reads with LOGIN REPLICATION, SELECT and a publication its owner created', async () => {
    await sql('CREATE TABLE public.granted (id int PRIMARY KEY, v text)');
    await sql(`INSERT INTO public.granted VALUES (1, 'a')`);
    await sql(`CREATE ROLE sluice_cdc LOGIN REPLICATION PASSWORD 'pw'`);
    await sql('GRANT SELECT ON public.granted TO sluice_cdc');
    const least: PgConnection = { ...conn, config: { ...conn.config, user: 'sluice_cdc' } };
    const op = {
      operation_type: 'cdc' as const,
      tables: ['public.granted'],
      snapshot: 'initial' as const,
      max_changes: 100,
      max_seconds: 10,
    };
    expect(await changes.check(least, op, ctx)).toEqual([]);
    const step = (cursor: string | null) =>
      stepContext({ kind: 'source', data_source_ref: 'db', operation: op }, { cursor });
    const readAs = async (cursor: string | null) => {
      const out = await changes.read(
        least,
        { ...step(cursor), runSlug: `least-${++runs}` },
        'sluice_least',
        ctx,
      );
      const { items } = await collect(out.payload);
      return { items: items as unknown[][], cursor: await out.nextCursor() };
    };
    // Without the publication the role cannot create it: the message gives the owner's statement.
    const refused = await readAs(null).then(
      () => null,
      (e) => e,
    );
    expect(refused?.code).toBe('PERMISSION_DENIED');
    expect(refused?.message).toContain('CREATE PUBLICATION "sluice_least" FOR TABLE "public"."granted"');
    await sql(
      `CREATE PUBLICATION sluice_least FOR TABLE public.granted WITH (publish = 'insert, update, delete')`,
    );
    const first = await readAs(null);
    expect(first.items.map((r) => r[5])).toEqual([1]);
    await sql(`UPDATE public.granted SET v = 'b' WHERE id = 1`);
    const second = await readAs(first.cursor);
    expect(second.items.map((r) => [r[0], r[5], r[6]])).toEqual([['update', 1, 'b']]);
  });
});
