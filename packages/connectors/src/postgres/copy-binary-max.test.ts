import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyBinaryMax } from './copy-binary-max';
import { CopyFramesOut } from './copy-frames-out';

// The greatest value read from a real binary COPY stream, split into chunks of every awkward
// size, must be what PostgreSQL's own max() answers, printed the same way.
// One text value is longer than the largest chunk; the others are short, so the stream stays
// under a megabyte (split a byte at a time for each column).

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const QUERY = `SELECT g AS id,
  CASE WHEN g % 7 = 0 THEN NULL ELSE (g * 7919 % 1000 - 500)::int2 END AS s,
  (g * 37 % 100000 - 50000)::int4 AS i,
  (g::int8 * 1000000007 % 9000000000000000000 - 4500000000000000000)::int8 AS b,
  date '2000-01-01' + (g % 20000 - 10000) AS d,
  CASE WHEN g = 1500 THEN timestamp 'infinity' ELSE timestamp '1999-12-31 23:59:59' + (g % 1000 - 500) * interval '1 day 1 second' END AS ts,
  timestamptz '1960-06-01 12:00:00+02' + g * interval '1 minute 1.5 second' AS tz,
  CASE WHEN g % 3 = 0 THEN NULL WHEN g = 2000 THEN repeat('x', 70000) ELSE repeat('x', g % 50) END AS t,
  NULL::int8 AS nothing,
  CASE WHEN g % 11 = 0 THEN NULL ELSE ((g * 7919 % 20001) - 10000)::numeric / 7 END AS n,
  g::numeric * 10::numeric ^ 30 + g::numeric / 1000 AS nbig,
  CASE g WHEN 5 THEN 'NaN'::numeric WHEN 6 THEN 'Infinity' WHEN 7 THEN '-Infinity' ELSE g::numeric / 1000 END AS nnan,
  CASE g WHEN 6 THEN 'Infinity'::numeric ELSE -g END AS ninf,
  -(g::numeric) / 3 AS nneg,
  CASE WHEN g = 10 THEN 5.50 WHEN g = 20 THEN 5.5 WHEN g = 2500 THEN 5.500 ELSE 1 END AS ntie,
  CASE WHEN g % 2 = 0 THEN 0 ELSE -g END::numeric AS nzero
  FROM generate_series(1, 3000) g`;
const COLUMNS = [
  's',
  'i',
  'b',
  'd',
  'ts',
  'tz',
  'nothing',
  'n',
  'nbig',
  'nnan',
  'ninf',
  'nneg',
  'ntie',
  'nzero',
] as const;
const CAST: Record<(typeof COLUMNS)[number], string> = {
  s: 'int2',
  i: 'int4',
  b: 'int8',
  d: 'date',
  ts: 'timestamp',
  tz: 'timestamptz',
  nothing: 'int8',
  n: 'numeric',
  nbig: 'numeric',
  nnan: 'numeric',
  ninf: 'numeric',
  nneg: 'numeric',
  ntie: 'numeric',
  nzero: 'numeric',
};

describe('CopyBinaryMax', () => {
  let client: pg.Client;
  let stream: Buffer;
  /** The same COPY as the server framed it: chunks of whole CopyData messages (copy-frames-out.ts). */
  let framed: Buffer[];
  const names = ['id', 's', 'i', 'b', 'd', 'ts', 'tz', 't', ...COLUMNS.slice(6)];

  beforeAll(async () => {
    client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    await client.query("SET TimeZone = 'Asia/Kolkata'");
    const parts: Buffer[] = [];
    for await (const c of client.query(copyStreams.to(`COPY (${QUERY}) TO STDOUT (FORMAT binary)`)))
      parts.push(c);
    stream = Buffer.concat(parts);
    framed = [];
    const frames = client.query(new CopyFramesOut(`COPY (${QUERY}) TO STDOUT (FORMAT binary)`));
    for await (const c of frames) framed.push(Buffer.from(c));
  });
  afterAll(() => client?.end());

  const printed = async (cast: string, bytes: Buffer | null) =>
    bytes === null ? null : (await client.query(`SELECT $1::${cast}::text AS v`, [bytes])).rows[0].v;

  for (const column of COLUMNS) {
    it(`finds max(${column}) at every chunk size`, async () => {
      const want = (await client.query(`SELECT max(${column})::text AS v FROM (${QUERY}) q`)).rows[0].v;
      for (const size of [stream.length, 1, 2, 3, 5, 7, 64, 1000, 65536]) {
        const scan = new CopyBinaryMax(
          names.indexOf(column),
          CAST[column] === 'numeric' ? 'numeric' : 'integer',
        );
        for (let at = 0; at < stream.length; at += size) scan.push(stream.subarray(at, at + size));
        expect(scan.failed).toBe(false);
        expect(scan.complete).toBe(true);
        expect(await printed(CAST[column], scan.max())).toBe(want);
      }
    });
  }

  it('finds the same max inside the CopyData messages, framed as the server sent them', async () => {
    expect(framed.length).toBeGreaterThan(1);
    // Whole messages regrouped too: one message per chunk, and all of them in one.
    const single: Buffer[] = [];
    for (const chunk of framed)
      for (let at = 0; at < chunk.length; ) {
        const end = at + 1 + chunk.readUInt32BE(at + 1);
        single.push(chunk.subarray(at, end));
        at = end;
      }
    for (const column of COLUMNS) {
      const want = (await client.query(`SELECT max(${column})::text AS v FROM (${QUERY}) q`)).rows[0].v;
      for (const chunks of [framed, single, [Buffer.concat(framed)]]) {
        const scan = new CopyBinaryMax(
          names.indexOf(column),
          CAST[column] === 'numeric' ? 'numeric' : 'integer',
        );
        for (const chunk of chunks) scan.pushFramed(chunk);
        expect(scan.failed).toBe(false);
        expect(scan.complete).toBe(true);
        expect(await printed(CAST[column], scan.max())).toBe(want);
      }
    }
  });

  it('gives up on framed chunks that are not whole CopyData messages', () => {
    const whole = Buffer.concat(framed);
    for (const cut of [1, 4, 5, 6, 100]) {
      const scan = new CopyBinaryMax(names.indexOf('i'));
      scan.pushFramed(whole.subarray(0, cut));
      expect(scan.failed).toBe(true);
    }
    const unframed = new CopyBinaryMax(names.indexOf('i'));
    unframed.pushFramed(stream);
    expect(unframed.failed).toBe(true);
    const wide = new CopyBinaryMax(names.indexOf('t'));
    for (const chunk of framed) wide.pushFramed(chunk);
    expect(wide.failed).toBe(true);
    const beyond = new CopyBinaryMax(names.length);
    for (const chunk of framed) beyond.pushFramed(chunk);
    expect(beyond.failed).toBe(true);
  });

  it('gives up on a stream that is not binary COPY, or a column of another width', () => {
    const text = new CopyBinaryMax(1);
    text.push(Buffer.from('1\t2024-01-01 00:00:00+00\n2\t2024-01-02 00:00:00+00\n'));
    expect(text.failed).toBe(true);
    const wide = new CopyBinaryMax(names.indexOf('t'));
    wide.push(stream);
    expect(wide.failed).toBe(true);
    const beyond = new CopyBinaryMax(names.length);
    beyond.push(stream);
    expect(beyond.failed).toBe(true);
  });
});
