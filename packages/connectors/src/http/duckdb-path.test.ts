import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Ports, RunOutcome } from '@sluice/engine';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edges, harness } from '../../../engine/src/test-support';
import { postgres, postgresConfigSchema } from '../postgres/index';
import { type ConnectorContext, defaultLimits } from '../types';
import { httpConfigSchema, httpCredentialsSchema } from './config';
import { httpConnector } from './index';

// HTTP JSON → DuckDB transform → PostgreSQL through the executor with the real connectors: a
// local records API and the PostgreSQL at 127.0.0.1:5432 (scratch database). The HTTP body's
// records go to DuckDB as bytes and DuckDB's CSV goes into COPY; the same data through the
// row path (the fallback) must land the same.

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = `sluice_duckpath_${randomBytes(4).toString('hex')}`;
const TRICKY = 'tab\there\nnew line\r\n"quotes" \'single\' \\backslash\\ \\N ünïcödé 😀, comma';

/** Record i: numbers, text that needs quoting, nested values, nulls. */
const record = (i: number) => ({
  id: i,
  name: i === 2 ? TRICKY : i === 3 ? '' : i === 4 ? '\\.' : `name ${i}`,
  amount: i * 1.25,
  tags: { kind: i % 2 ? 'odd' : 'even', list: [i, i + 1] },
  note: i % 3 === 0 ? null : `note ${i}`,
  created_at: new Date(Date.UTC(2024, 0, 1) + i * 1_000_123).toISOString(),
  active: i % 2 === 0,
  mixed: [i, `x${i}`, { n: i }],
});

const sinkSlug = (table: string) => `load-${table.replace(/_/g, '-')}`;

let db: pg.Client;
const sql = async (text: string, values: unknown[] = []) => (await db.query(text, values)).rows;

describe('HTTP JSON → DuckDB → PostgreSQL without rows in JavaScript', () => {
  let server: http.Server;
  let base: string;
  const PAGE = 4;
  const TOTAL = 10;
  let stallAfter: (() => void) | null = null;
  const ctx: ConnectorContext = { policy: { allowPrivate: true }, limits: defaultLimits };

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${DB}`);
    await admin.end();
    const url = new URL(ADMIN_URL);
    url.pathname = `/${DB}`;
    db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://peer');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.pathname === '/stall') {
        res.write('{"data":{"items":[');
        stallAfter = () => res.destroy();
        return; // the rest never comes
      }
      if (url.pathname === '/empty') return res.end('{"meta":{},"data":{"items":[]}}');
      // n records in one page: past the transform's sample (small in these tests) they stream.
      // `hole` leaves an element out after record k; `stall` never ends; `us` adds a date
      // written month first, which only DuckDB's own detection reads.
      if (url.pathname === '/many') {
        const n = Number(url.searchParams.get('n'));
        const hole = Number(url.searchParams.get('hole') ?? 0);
        const us = url.searchParams.has('us');
        const parts: string[] = [];
        for (let i = 1; i <= n; i++) {
          const r = us ? { ...record(i), day: `0${(i % 9) + 1}-1${i % 10}-2024` } : record(i);
          parts.push(JSON.stringify(r) + (i === hole ? ',' : ''));
        }
        res.write(`{"meta":{"next":"${n}"},"data":{"items":[${parts.join(',\n')}`);
        if (url.searchParams.has('stall')) {
          stallAfter = () => res.destroy();
          return;
        }
        return res.end(']}}');
      }
      // A hole between two records: not JSON, though DuckDB would skip the blank line it makes.
      if (url.pathname === '/hole')
        return res.end(
          `{"meta":{},"data":{"items":[${JSON.stringify(record(1))},,${JSON.stringify(record(2))}]}}`,
        );
      // Pages of PAGE records after `after`; the next cursor is in meta.next.
      const after = Number(url.searchParams.get('after') ?? 0);
      const items = [];
      for (let i = after + 1; i <= Math.min(TOTAL, after + PAGE); i++) items.push(record(i));
      const next = items.length > 0 ? String(after + items.length) : null;
      res.end(JSON.stringify({ meta: { next }, data: { items } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await db?.end();
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.end();
  });

  const ports = (): Ports => {
    const admin = new URL(ADMIN_URL);
    const pgConn = {
      config: postgresConfigSchema.parse({
        host: admin.hostname,
        port: Number(admin.port || 5432),
        database: DB,
        user: 'postgres',
        allow_private_hosts: true,
      }),
      credentials: { password: 'unused' },
    };
    const httpConn = {
      config: httpConfigSchema.parse({ base_url: base, allow_private_hosts: true }),
      credentials: httpCredentialsSchema.parse({}),
    };
    return {
      readSource: (step) => httpConnector.source.read(httpConn, step, { ...ctx, signal: step.signal }),
      writeSink: (input, step) =>
        postgres.sink.write(pgConn, input, step, {
          ...ctx,
          signal: step.signal,
          commitKey: `${step.runSlug}-${randomBytes(4).toString('hex')}:${step.step.slug}`,
        }),
    };
  };

  const spec = (table: string, opts: { path?: string; transform?: string; twoSinks?: boolean } = {}) => ({
    steps: [
      {
        slug: 'people',
        kind: 'source',
        data_source_ref: 'api',
        operation: {
          operation_type: 'http',
          method: 'GET',
          path: opts.path ?? '/people',
          query_params: { after: '{{runtime.incremental.lower_bound.cursor}}' },
        },
        response: { records_path: 'data.items', cursor_path: 'meta.next' },
      },
      {
        slug: 'clean',
        kind: 'transform',
        operation: {
          operation_type: 'sql',
          sql: opts.transform ?? 'SELECT id, name, amount, tags, note, created_at, active, mixed FROM people',
        },
      },
      ...[table, ...(opts.twoSinks ? [`${table}_copy`] : [])].map((t) => ({
        slug: sinkSlug(t),
        kind: 'sink',
        data_source_ref: 'db',
        operation: { operation_type: 'sql', write: { table: t, mode: 'insert', create_table: true } },
      })),
    ],
    edges: edges(
      ['people', 'clean'],
      ...[table, ...(opts.twoSinks ? [`${table}_copy`] : [])].map(
        (t) => ['clean', sinkSlug(t)] as [string, string],
      ),
    ),
  });

  const landed = (table: string) =>
    sql(
      `SELECT id, name, amount::text AS amount, tags::text AS tags, note, created_at::text AS created_at, active, mixed::text AS mixed
         FROM ${table} ORDER BY id`,
    );

  it('hands the body to DuckDB and its CSV to COPY, page by page with the cursor', async () => {
    const h = await harness(spec('direct'), ports());
    try {
      const cursors: Record<string, string | null> = {};
      let outcome: RunOutcome | null = null;
      for (let page = 0; page < 3; page++) {
        h.reports.length = 0;
        h.logs.length = 0;
        outcome = await h.run({ cursors: { ...cursors } });
        cursors.people = outcome.cursors.people;
        const rows = Math.min(PAGE, TOTAL - page * PAGE);
        expect(h.final('people')?.counters).toMatchObject({ rows_out: rows });
        expect(h.final('clean')?.counters).toMatchObject({ rows_in: rows, rows_out: rows });
        expect(h.final('load-direct')?.counters).toMatchObject({ rows_in: rows, rows_out: rows });
        expect(h.final('load-direct')?.counters.bytes_out).toBeGreaterThan(0);
        // The bytes handed on count as they pass: the records' JSON and the transform's CSV.
        const handed = (slug: string) => h.final(slug)?.counters;
        expect(handed('people')?.bytes_out).toBeGreaterThan(rows * 20);
        expect(handed('clean')?.bytes_in).toBe(handed('people')?.bytes_out);
        expect(handed('clean')?.bytes_out).toBeGreaterThan(rows * 10);
        expect(handed('load-direct')?.bytes_in).toBe(handed('clean')?.bytes_out);
        const messages = h.logs.map((l) => l.message);
        expect(messages).toContain(
          `DuckDB reads the JSON records of people directly from the source's bytes (${rows} records)`,
        );
        expect(messages).toContain(`COPY read the transform's CSV directly (${rows} rows)`);
      }
      expect(outcome?.cursors.people).toBe(String(TOTAL));
      const rows = await landed('direct');
      expect(rows).toHaveLength(TOTAL);
      expect(rows[1].name).toBe(TRICKY);
      expect(rows[2]).toMatchObject({ name: '', note: null });
      expect(rows[3].name).toBe('\\.');
      expect(JSON.parse(rows[0].tags)).toEqual({ kind: 'odd', list: [1, 2] });
      // A mixed-type list is JSON[] in DuckDB: each element lands as the JSON value it is.
      expect(JSON.parse(rows[0].mixed)).toEqual([1, 'x1', { n: 1 }]);
      expect(rows[0].amount).toBe('1.25');
      expect(rows[0].created_at).toBe('2024-01-01 00:16:40.123');
      const ledger = await sql(
        `SELECT rows FROM sluice_sink_commits WHERE commit_key LIKE '%:load-direct' ORDER BY committed_at`,
      );
      expect(ledger).toEqual([{ rows: '4' }, { rows: '4' }, { rows: '2' }]);
    } finally {
      await h.cleanup();
    }
  });

  it('lands the same rows through the row path, which it takes (and says so) where bytes cannot go', async () => {
    // Two sinks: the transform's result is spooled, so each sink reads rows. A template in the
    // SQL keeps DuckDB's CSV out too. Both land what the direct path lands.
    const viaRows = await harness(
      spec('rows', {
        twoSinks: true,
        transform:
          "SELECT id, name, amount, tags, note, created_at, active, mixed FROM people WHERE {{runtime.run_slug}} <> ''",
      }),
      ports(),
    );
    const direct = await harness(spec('direct2'), ports());
    try {
      for (const h of [viaRows, direct]) {
        for (let page = 0; page * PAGE < TOTAL; page++)
          await h.run({ cursors: { people: page === 0 ? null : String(page * PAGE) } });
      }
      const messages = viaRows.logs.map((l) => l.message);
      expect(messages).toContain('the result leaves DuckDB row by row: the SQL has template parameters');
      expect(messages.some((m) => m.startsWith('COPY read'))).toBe(false);
      const expected = await landed('direct2');
      expect(await landed('rows')).toEqual(expected);
      expect(await landed('rows_copy')).toEqual(expected);
    } finally {
      await viaRows.cleanup();
      await direct.cleanup();
    }
  });

  it('writes nothing for a page without records and keeps the cursor', async () => {
    const h = await harness(spec('empty', { path: '/empty' }), ports());
    try {
      const outcome = await h.run({ cursors: { people: '7' } });
      expect(outcome.cursors.people).toBe('7');
      expect(h.final('load-empty')?.state).toBe('succeeded');
      expect(h.final('load-empty')?.counters.rows_out).toBe(0);
      expect(await sql(`SELECT to_regclass('empty') AS r`)).toEqual([{ r: null }]);
    } finally {
      await h.cleanup();
    }
  });

  it('fails the transform when DuckDB fails while writing the CSV, and commits nothing', async () => {
    const h = await harness(
      spec('broken', { transform: 'SELECT id, CAST(name AS INTEGER) AS n FROM people' }),
      ports(),
    );
    try {
      await expect(h.run()).rejects.toMatchObject({ code: 'TRANSFORM_FAILED' });
      expect(h.final('clean')?.state).toBe('failed');
      expect(h.final('load-broken')?.state).toBe('canceled');
      expect(await sql(`SELECT to_regclass('broken') AS r`)).toEqual([{ r: null }]);
    } finally {
      await h.cleanup();
    }
  });

  it('fails on a records array with an element missing, and commits nothing', async () => {
    const h = await harness(spec('holed', { path: '/hole' }), ports());
    try {
      // The source cuts the records into lines and finds the hole itself, as its row path would.
      await expect(h.run()).rejects.toMatchObject({ code: 'STEP_FAILED' });
      const failed = h.final('people');
      expect(failed?.state).toBe('failed');
      expect(JSON.stringify(failed?.error)).toContain(
        'the response is not valid JSON (an element missing before a comma)',
      );
      expect(await sql(`SELECT to_regclass('holed') AS r`)).toEqual([{ r: null }]);
    } finally {
      await h.cleanup();
    }
  });

  describe('past the sample DuckDB detects the columns on, the records stream into the query', () => {
    const SAMPLE = 8;
    const messages = (h: { logs: { message: string }[] }) => h.logs.map((l) => l.message);

    it('lands what loading them whole lands, with the cursor and the counts', async () => {
      const streamed = await harness(spec('streamed', { path: '/many?n=50' }), ports());
      const whole = await harness(spec('whole', { path: '/many?n=50' }), ports());
      // Two sinks: the result leaves DuckDB row by row while the records still stream in.
      const rows2 = await harness(spec('streamed_rows', { path: '/many?n=50', twoSinks: true }), ports());
      try {
        const outcome = await streamed.run({ transformJsonSample: SAMPLE });
        await whole.run();
        await rows2.run({ transformJsonSample: SAMPLE });
        expect(messages(rows2)).toContain(
          `DuckDB reads the JSON records of people while they arrive (columns from the first ${SAMPLE})`,
        );
        expect(outcome.cursors.people).toBe('50');
        expect(messages(streamed)).toContain(
          `DuckDB reads the JSON records of people while they arrive (columns from the first ${SAMPLE})`,
        );
        expect(messages(whole)).toContain(
          "DuckDB reads the JSON records of people directly from the source's bytes (50 records)",
        );
        expect(streamed.final('people')?.counters).toMatchObject({ rows_out: 50 });
        expect(streamed.final('clean')?.counters).toMatchObject({ rows_in: 50, rows_out: 50 });
        expect(messages(streamed)).toContain("COPY read the transform's CSV directly (50 rows)");
        const rows = await landed('streamed');
        expect(rows).toHaveLength(50);
        expect(rows).toEqual(await landed('whole'));
        expect(await landed('streamed_rows')).toEqual(rows);
        expect(await landed('streamed_rows_copy')).toEqual(rows);
      } finally {
        await streamed.cleanup();
        await whole.cleanup();
        await rows2.cleanup();
      }
    });

    it('gives a query that reads them twice or stops early a table, read from the same stream', async () => {
      const joined = await harness(
        spec('joined', {
          path: '/many?n=50',
          transform:
            'SELECT a.id, a.name, a.amount, a.tags, a.note, a.created_at, a.active, a.mixed FROM people a JOIN people b ON a.id = b.id',
        }),
        ports(),
      );
      const limited = await harness(
        spec('limited', { path: '/many?n=50', transform: 'SELECT id, name FROM people LIMIT 5' }),
        ports(),
      );
      const whole = await harness(spec('whole2', { path: '/many?n=50' }), ports());
      try {
        await whole.run();
        await joined.run({ transformJsonSample: SAMPLE });
        const outcome = await limited.run({ transformJsonSample: SAMPLE });
        const loaded =
          'the query reads its JSON input more than once or not to its end: loaded as a table first';
        expect(messages(joined)).toContain(loaded);
        expect(messages(limited)).toContain(loaded);
        expect(await landed('joined')).toEqual(await landed('whole2'));
        expect(await sql('SELECT count(*)::int AS n FROM limited')).toEqual([{ n: 5 }]);
        // The source still read its response to the end: its count and cursor are whole.
        expect(outcome.cursors.people).toBe('50');
        expect(limited.final('people')?.counters).toMatchObject({ rows_out: 50 });
      } finally {
        await joined.cleanup();
        await limited.cleanup();
        await whole.cleanup();
      }
    });

    // Past the sample the records go through one named pipe after another (1 MiB each first,
    // duck-stream.ts); 30,000 of these records are ~6.6 MB, seven pipes.
    it('crosses from pipe to pipe: lands what loading them whole lands, and a query that stops early still counts every record', async () => {
      const streamed = await harness(spec('piped', { path: '/many?n=30000' }), ports());
      const whole = await harness(spec('piped_whole', { path: '/many?n=30000' }), ports());
      // The join's other side is empty: the scan of the records ends at its first rows.
      const early = await harness(
        spec('piped_early', {
          path: '/many?n=30000',
          transform:
            'SELECT p.id, p.name FROM people p JOIN (SELECT i FROM range(0) AS t(i)) e ON p.id = e.i',
        }),
        ports(),
      );
      try {
        const outcome = await streamed.run({ transformJsonSample: SAMPLE });
        await whole.run({ transformJsonSample: 100_000 });
        expect(messages(streamed)).toContain(
          `DuckDB reads the JSON records of people while they arrive (columns from the first ${SAMPLE})`,
        );
        expect(outcome.cursors.people).toBe('30000');
        expect(streamed.final('clean')?.counters).toMatchObject({ rows_in: 30_000, rows_out: 30_000 });
        const rows = await sql('SELECT count(*)::int AS n, sum(id)::bigint::text AS s FROM piped');
        expect(rows).toEqual([{ n: 30_000, s: String((30_000 * 30_001) / 2) }]);
        expect(await sql('SELECT * FROM piped EXCEPT ALL SELECT * FROM piped_whole')).toEqual([]);
        expect(await sql('SELECT * FROM piped_whole EXCEPT ALL SELECT * FROM piped')).toEqual([]);
        const ended = await early.run({ transformJsonSample: SAMPLE });
        expect(messages(early)).toContain(
          `DuckDB reads the JSON records of people while they arrive (columns from the first ${SAMPLE})`,
        );
        expect(ended.cursors.people).toBe('30000');
        expect(early.final('people')?.counters).toMatchObject({ rows_out: 30_000 });
        expect(await sql('SELECT count(*)::int AS n FROM piped_early')).toEqual([{ n: 0 }]);
      } finally {
        await streamed.cleanup();
        await whole.cleanup();
        await early.cleanup();
      }
    });

    it('loads them whole where only DuckDB’s own detection reads them (a month-first date)', async () => {
      const h = await harness(
        spec('usdates', { path: '/many?n=50&us=1', transform: 'SELECT id, day FROM people' }),
        ports(),
      );
      const whole = await harness(
        spec('usdates_whole', { path: '/many?n=50&us=1', transform: 'SELECT id, day FROM people' }),
        ports(),
      );
      try {
        await h.run({ transformJsonSample: SAMPLE });
        await whole.run();
        expect(messages(h)).toContain(
          'DuckDB loads the JSON records of people whole: its columns need its own detection',
        );
        const rows = await sql('SELECT id, day::text AS day FROM usdates ORDER BY id');
        expect(rows).toHaveLength(50);
        // A date column, read as DuckDB's detection reads it (not as ISO 8601, which fails).
        expect(rows[0].day).toMatch(/^2024-\d\d-\d\d$/);
        expect(rows).toEqual(await sql('SELECT id, day::text AS day FROM usdates_whole ORDER BY id'));
      } finally {
        await h.cleanup();
        await whole.cleanup();
      }
    });

    // In the first pipe, and in a later one (30,000 records go through seven, duck-stream.ts).
    for (const [table, path] of [
      ['holed2', '/many?n=50&hole=30'],
      ['holed3', '/many?n=30000&hole=20000'],
    ])
      it(`fails on a hole after the sample (${path}), and commits nothing`, async () => {
        const h = await harness(spec(table, { path }), ports());
        try {
          await expect(h.run({ transformJsonSample: SAMPLE })).rejects.toMatchObject({ code: 'STEP_FAILED' });
          expect(h.final('people')?.state).toBe('failed');
          expect(JSON.stringify(h.final('people')?.error)).toContain('an element missing before a comma');
          expect(h.final(sinkSlug(table))?.state).not.toBe('succeeded');
          expect(await sql(`SELECT to_regclass('${table}') AS r`)).toEqual([{ r: null }]);
        } finally {
          await h.cleanup();
        }
      });

    // In the first pipe, and in a later one: every record but the array's end has arrived, and
    // the query waits in the last pipe it reached.
    for (const [table, path, settle] of [
      ['stalled2', '/many?n=50&stall=1', 0],
      ['stalled3', '/many?n=30000&stall=1', 300],
    ] as const)
      it(`cancels while the streamed records still arrive (${path}), and commits nothing`, async () => {
        const h = await harness(spec(table, { path }), ports());
        try {
          const controller = new AbortController();
          const run = h.run({ signal: controller.signal, transformJsonSample: SAMPLE });
          while (!stallAfter || !messages(h).some((m) => m.includes('while they arrive')))
            await new Promise((r) => setTimeout(r, 20));
          await new Promise((r) => setTimeout(r, settle));
          controller.abort('stop');
          await expect(run).rejects.toMatchObject({ code: 'CANCELED' });
          stallAfter();
          expect(h.final(sinkSlug(table))?.state).toBe('canceled');
          expect(await sql(`SELECT to_regclass('${table}') AS r`)).toEqual([{ r: null }]);
        } finally {
          stallAfter = null;
          await h.cleanup();
        }
      });
  });

  it('cancels while the body is still arriving and commits nothing', async () => {
    const h = await harness(spec('stalled', { path: '/stall' }), ports());
    try {
      const controller = new AbortController();
      const run = h.run({ signal: controller.signal });
      while (!stallAfter) await new Promise((r) => setTimeout(r, 20));
      controller.abort('stop');
      await expect(run).rejects.toMatchObject({ code: 'CANCELED' });
      stallAfter();
      expect(h.final('people')?.state).toBe('canceled');
      expect(h.final('load-stalled')?.state).toBe('canceled');
      expect(await sql(`SELECT to_regclass('stalled') AS r`)).toEqual([{ r: null }]);
    } finally {
      stallAfter = null;
      await h.cleanup();
    }
  });
});
