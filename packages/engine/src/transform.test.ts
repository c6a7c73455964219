import { afterAll, describe, expect, it } from 'vitest';
import type { ExecuteRunOptions } from './executor';
import type { Payload, SourceOutput } from './payloads';
import {
  collectSink,
  edges,
  harness,
  memoryPorts,
  rejection,
  rowsSource,
  sink,
  source,
  testTransformHost,
  transform,
} from './test-support';
import { duckType } from './transform';
import type { TransformHost } from './transform-remote';

const once = (payload: Payload) => (): SourceOutput => ({ payload, nextCursor: async () => null });
const bytes = (...parts: string[]) =>
  (async function* () {
    for (const p of parts) yield new TextEncoder().encode(p);
  })();

// Every case twice: in this process's DuckDB, and in a transform host's child process
// (transform-remote.ts), which must give the same rows, errors and logs.
let host: TransformHost | null = null;
afterAll(() => host?.stop());

describe.each([
  ['in this process', false],
  ['in a transform host', true],
])('transforms in DuckDB, %s', (_label, remote) => {
  const where = (): Partial<ExecuteRunOptions> => {
    if (!remote) return {};
    host ??= testTransformHost();
    return { transforms: host };
  };

  it('streams 200,000 rows through source → transform → sink with bounded memory', async () => {
    const total = 200_000;
    const size = 2000;
    let sum = 0;
    let count = 0;
    let peak = 0;
    const base = process.memoryUsage().heapUsed;
    const h = await harness(
      {
        steps: [
          source('orders'),
          transform(
            'clean',
            'SELECT id, upper(name) AS name, amount * 2 AS doubled FROM orders WHERE id % 2 = 0',
          ),
          sink('load'),
        ],
        edges: edges(['orders', 'clean'], ['clean', 'load']),
      },
      memoryPorts(
        {
          orders: rowsSource(
            ['id:integer', 'name:text', 'amount:numeric(12,2)'],
            (function* () {
              for (let b = 0; b < total / size; b++)
                yield Array.from({ length: size }, (_, i) => {
                  const id = b * size + i;
                  return [id, `name-${id}-${'x'.repeat(40)}`, '1.25'];
                });
            })(),
            String(total),
          ),
        },
        {
          load: async (input) => {
            if (input.kind !== 'rows') throw new Error('rows expected');
            expect(input.columns.map((c) => `${c.name} ${c.type}`).join(', ')).toMatch(
              /^id INTEGER, name VARCHAR, doubled DECIMAL\(\d+,2\)$/,
            );
            for await (const b of input.batches) {
              for (const r of b) {
                count++;
                sum += r[2] as number;
              }
              peak = Math.max(peak, process.memoryUsage().heapUsed);
            }
            return { rows: count, bytes: 0 };
          },
        },
      ),
    );
    const out = await h.run(where());
    expect(out.cursors).toEqual({ orders: '200000' });
    expect(count).toBe(total / 2);
    expect(sum).toBeCloseTo(2.5 * (total / 2));
    // A sanity bound, not a benchmark: the run never holds the dataset on the JS heap.
    expect(peak - base).toBeLessThan(150 * 1024 * 1024);
    expect(h.final('clean')).toMatchObject({
      state: 'succeeded',
      counters: { rows_in: total, rows_out: total / 2 },
    });
    expect(h.final('load')?.counters).toMatchObject({ rows_in: total / 2, rows_out: total / 2 });
    await h.cleanup();
  }, 60_000);

  it('reads JSON and CSV payloads as tables named by their steps', async () => {
    const got: unknown[][] = [];
    const columns = { names: [] as string[] };
    const h = await harness(
      {
        steps: [
          source('people'),
          source('labels'),
          transform(
            'joined',
            'SELECT p.id, p.name, p.address.city AS city, l.label FROM people p JOIN labels l ON p.id = l.id ORDER BY p.id',
          ),
          sink('load'),
        ],
        edges: edges(['people', 'joined'], ['labels', 'joined'], ['joined', 'load']),
      },
      memoryPorts(
        {
          people: once({
            kind: 'json',
            batches: (async function* () {
              yield [
                { id: 1, name: 'Ada', address: { city: 'London' } },
                { id: 2, name: 'Grace', address: { city: 'Arlington' } },
              ];
              yield [{ id: 3, name: 'Edsger', address: { city: 'Nuenen' } }];
            })(),
          }),
          labels: once({
            kind: 'csv',
            delimiter: ';',
            header: true,
            chunks: bytes('id;label\n1;"first; of all"\n2;sec', 'ond\n3;third\n'),
          }),
        },
        { load: collectSink(got, columns) },
      ),
    );
    await h.run(where());
    expect(columns.names).toEqual(['id', 'name', 'city', 'label']);
    expect(got).toEqual([
      [1, 'Ada', 'London', 'first; of all'],
      [2, 'Grace', 'Arlington', 'second'],
      [3, 'Edsger', 'Nuenen', 'third'],
    ]);
    expect(h.final('joined')?.counters).toMatchObject({ rows_in: 3, rows_out: 3 });
    expect(h.final('joined')!.counters.bytes_in).toBeGreaterThan(20);
    await h.cleanup();
  });

  // Nested values (lists, structs) reach the next transform as JSON.
  it('chains transforms and keeps dates, lists (as JSON) and big integers usable', async () => {
    const got: unknown[][] = [];
    const h = await harness(
      {
        steps: [
          source('s'),
          transform('a', 'SELECT id, ts, [id, id + 1] AS pair, 9007199254740993::BIGINT AS big FROM s'),
          transform(
            'b',
            "SELECT id, ts + INTERVAL 1 DAY AS next_day, CAST(pair->>'$[1]' AS INTEGER) AS second, big FROM a",
          ),
          sink('load'),
        ],
        edges: edges(['s', 'a'], ['a', 'b'], ['b', 'load']),
      },
      memoryPorts(
        { s: rowsSource(['id:int4', 'ts:timestamptz'], [[[7, new Date('2024-01-31T10:00:00Z')]]]) },
        { load: collectSink(got) },
      ),
    );
    await h.run(where());
    expect(got).toEqual([[7, new Date('2024-02-01T10:00:00Z'), 8, '9007199254740993']]);
    await h.cleanup();
  });

  // duck-csv.ts spells a TIMESTAMP's CSV out instead of formatting it as a TIMESTAMPTZ: the
  // same text, whatever the value (fractions, infinities, years before 1 and after 9999, NULL).
  it('writes a TIMESTAMP into the CSV for COPY as the text of its TIMESTAMPTZ', async () => {
    const lines: string[] = [];
    const h = await harness(
      {
        steps: [
          source('s'),
          transform(
            'a',
            `SELECT ts, CAST(CAST(ts AS TIMESTAMPTZ) AS VARCHAR) AS want FROM (VALUES
               (TIMESTAMP '2024-01-01 00:00:01'), (TIMESTAMP '2024-01-01 00:00:01.5'),
               (TIMESTAMP '1969-12-31 23:59:59.999999'), (TIMESTAMP 'infinity'),
               (TIMESTAMP '-infinity'), (TIMESTAMP '0001-01-01 12:00:00' - INTERVAL 800 YEAR),
               (TIMESTAMP '12345-06-07 08:09:10'), (NULL)) AS v(ts)
             UNION ALL SELECT ts, CAST(CAST(ts AS TIMESTAMPTZ) AS VARCHAR) FROM s`,
          ),
          sink('load'),
        ],
        edges: edges(['s', 'a'], ['a', 'load']),
      },
      memoryPorts(
        { s: rowsSource(['ts:timestamp'], [[[new Date('2024-02-29T23:59:59.123Z')]]]) },
        {
          load: async (input) => {
            if (input.kind !== 'rows' || !input.csv) throw new Error('CSV expected');
            let text = '';
            for await (const c of input.csv.chunks) text += Buffer.from(c).toString();
            lines.push(...text.trimEnd().split('\n'));
            return { rows: lines.length, bytes: text.length };
          },
        },
      ),
    );
    await h.run(where());
    expect(lines).toHaveLength(9);
    for (const line of lines) {
      const [ts, want] = line.split(',');
      expect(ts).toBe(want.replace(/^"|"$/g, ''));
    }
    expect(lines).toContain('2024-02-29 23:59:59.123+00,"2024-02-29 23:59:59.123+00"');
    expect(lines).toContain('infinity,"infinity"');
    expect(lines).toContain(',');
    await h.cleanup();
  });

  it('fails with TRANSFORM_FAILED and DuckDB’s message on a SQL error', async () => {
    const h = await harness(
      {
        steps: [source('orders'), transform('clean', 'SELECT id FROM order_lines'), sink('load')],
        edges: edges(['orders', 'clean'], ['clean', 'load']),
      },
      memoryPorts({ orders: rowsSource(['id:int'], [[[1]]]) }, { load: collectSink([]) }),
    );
    const err = await rejection(h.run(where()));
    expect(err.code).toBe('TRANSFORM_FAILED');
    expect(err.message).toMatch(
      /^transform clean: Catalog Error: Table with name order_lines does not exist/,
    );
    expect(h.final('clean')).toMatchObject({ state: 'failed', error: { code: 'TRANSFORM_FAILED' } });
    expect(h.final('load')?.state).toBe('skipped');
    expect(h.final('orders')?.state).toMatch(/^(succeeded|canceled)$/);
    await h.cleanup();
  });

  // An incremental source with no new data answers an empty page: its table has no columns.
  it('gives no rows when every input arrived empty, where naming their columns cannot bind', async () => {
    const got: unknown[][] = [];
    const columns = { names: [] as string[] };
    const empty = once({ kind: 'json', batches: (async function* () {})() });
    const h = await harness(
      {
        steps: [
          source('orders'),
          transform('clean', 'SELECT id, upper(name) AS name FROM orders'),
          sink('load'),
        ],
        edges: edges(['orders', 'clean'], ['clean', 'load']),
      },
      memoryPorts({ orders: empty }, { load: collectSink(got, columns) }),
    );
    await h.run(where());
    expect(got).toEqual([]);
    expect(columns.names).toEqual([]);
    expect(h.final('clean')).toMatchObject({ state: 'succeeded', counters: { rows_out: 0 } });
    await h.cleanup();

    // A query that binds still runs on the empty table; a non-empty input still fails on a typo.
    const counted: unknown[][] = [];
    const count = await harness(
      {
        steps: [source('orders'), transform('clean', 'SELECT count(*) AS n FROM orders'), sink('load')],
        edges: edges(['orders', 'clean'], ['clean', 'load']),
      },
      memoryPorts(
        { orders: once({ kind: 'json', batches: (async function* () {})() }) },
        { load: collectSink(counted) },
      ),
    );
    await count.run(where());
    expect(counted).toEqual([[0]]);
    await count.cleanup();
    const typo = await harness(
      {
        steps: [source('orders'), transform('clean', 'SELECT idd FROM orders'), sink('load')],
        edges: edges(['orders', 'clean'], ['clean', 'load']),
      },
      memoryPorts(
        {
          orders: once({
            kind: 'json',
            batches: (async function* () {
              yield [{ id: 1 }];
            })(),
          }),
        },
        { load: collectSink([]) },
      ),
    );
    expect((await rejection(typo.run(where()))).message).toMatch(/^transform clean: Binder Error/);
    await typo.cleanup();
  });

  it('fails a query that breaks while streaming, and refuses file payloads', async () => {
    const broken = await harness(
      {
        steps: [
          source('orders'),
          transform('clean', 'SELECT CAST(code AS INTEGER) AS n FROM orders'),
          sink('load'),
        ],
        edges: edges(['orders', 'clean'], ['clean', 'load']),
      },
      memoryPorts(
        { orders: rowsSource(['code'], [[['1'], ['2'], ['not a number']]]) },
        { load: collectSink([]) },
      ),
    );
    const err = await rejection(broken.run(where()));
    expect(err).toMatchObject({ code: 'TRANSFORM_FAILED', step: 'clean' });
    expect(err.message).toContain('not a number');
    await broken.cleanup();

    const file = await harness(
      {
        steps: [source('doc'), transform('t', 'SELECT * FROM doc'), sink('load')],
        edges: edges(['doc', 't'], ['t', 'load']),
      },
      memoryPorts(
        { doc: once({ kind: 'file', mimeType: 'application/pdf', chunks: bytes('%PDF') }) },
        { load: collectSink([]) },
      ),
    );
    const fileErr = await rejection(file.run(where()));
    expect(fileErr).toMatchObject({
      code: 'TRANSFORM_FAILED',
      message: 'step t: input doc is a file payload; a transform reads rows, JSON or CSV',
    });
    await file.cleanup();

    const form = await harness(
      {
        steps: [source('doc'), transform('t', 'SELECT * FROM doc'), sink('load')],
        edges: edges(['doc', 't'], ['t', 'load']),
      },
      memoryPorts(
        { doc: once({ kind: 'form', encoding: 'urlencoded', fields: [{ name: 'a', value: '1' }] }) },
        { load: collectSink([]) },
      ),
    );
    expect((await rejection(form.run(where()))).message).toBe(
      'step t: input doc is a form payload; a transform reads rows, JSON or CSV',
    );
    await form.cleanup();
  });

  it('runs user SQL in a sandbox: no files outside the step, no settings, no extensions', async () => {
    for (const sql of [
      "SELECT * FROM read_csv_auto('/etc/passwd')",
      "SELECT * FROM read_text('/etc/hostname')",
      "COPY (SELECT 1) TO '/tmp/sluice-escape.csv'",
      'INSTALL httpfs',
    ]) {
      const h = await harness(
        { steps: [source('s'), transform('t', sql), sink('load')], edges: edges(['s', 't'], ['t', 'load']) },
        memoryPorts({ s: rowsSource(['id:int'], [[[1]]]) }, { load: collectSink([]) }),
      );
      const err = await rejection(h.run(where()));
      expect(err.code).toBe('TRANSFORM_FAILED');
      expect(err.message).toMatch(/Permission Error|disabled/);
      await h.cleanup();
    }
    const locked = await harness(
      {
        steps: [source('s'), transform('t', 'SET enable_external_access = true'), sink('load')],
        edges: edges(['s', 't'], ['t', 'load']),
      },
      memoryPorts({ s: rowsSource(['id:int'], [[[1]]]) }, { load: collectSink([]) }),
    );
    expect((await rejection(locked.run(where()))).message).toContain('the configuration has been locked');
    await locked.cleanup();
  });
});

describe('duckType', () => {
  it('maps PostgreSQL, MySQL and DuckDB spellings', () => {
    expect(duckType('int4')).toBe('INTEGER');
    expect(duckType('bigint unsigned')).toBe('BIGINT');
    expect(duckType('tinyint(1)')).toBe('BOOLEAN');
    expect(duckType('numeric(10,2)')).toBe('DECIMAL(10,2)');
    expect(duckType('numeric')).toBe('DOUBLE');
    expect(duckType('timestamp with time zone')).toBe('TIMESTAMPTZ');
    expect(duckType('datetime')).toBe('TIMESTAMP');
    expect(duckType('character varying(255)')).toBe('VARCHAR');
    expect(duckType('jsonb')).toBe('JSON');
    expect(duckType('INTEGER[]')).toBe('JSON');
    expect(duckType('bytea')).toBe('BLOB');
    expect(duckType('interval')).toBe('VARCHAR');
  });
});
