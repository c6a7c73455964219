import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyFramesOut } from './copy-frames-out';
import { copyIn } from './copy-in';
import { type ScratchDatabase, scratchDatabase } from './scratch-database';
import { recordAnswer } from './server-recording';
import { LIFT_SQL } from './statement-limit';

// The framed pass-through against real PostgreSQL: the source's CopyData messages read off its
// socket (copy-frames-out.ts) and written into the target's COPY, a chunk's messages joined into one
// (copy-frames-in.ts; the joining alone in copy-frames-in.test.ts, unframed input in copy-in.test.ts).
// The reader is also replayed over a COPY response recorded byte for byte from the server (a
// notice between the rows, a row larger than a socket chunk, one that fails halfway), cut at
// every byte: each chunk it hands on must hold whole CopyData messages only, all of them the
// server's, nothing else; what follows the copy must reach pg's reader intact.

const COLUMNS = ['g', 't', 'n', 'q'];
/** Rows with a notice every 97th, text up to 299 bytes, NULLs. */
const ROWS = (n: number) => `SELECT g, repeat('x', g % 300) AS t,
  CASE WHEN g % 3 = 0 THEN NULL ELSE g::numeric / 7 END AS n, noisy(g) AS q FROM generate_series(1, ${n}) g`;
const FAILING =
  "SELECT g, repeat('x', g % 300) AS t, (1 / (g - 1500))::numeric AS n, g AS q FROM generate_series(1, 2000) g";

let db: ScratchDatabase;
let source: pg.Client;
let target: pg.Client;

beforeAll(async () => {
  db = await scratchDatabase(`frames_copy_${process.pid}`);
  source = await db.connect();
  target = await db.connect();
  await source.query(`CREATE FUNCTION noisy(i int) RETURNS int LANGUAGE plpgsql AS $$
    BEGIN IF i % 97 = 0 THEN RAISE NOTICE 'row %', i; END IF; RETURN i; END $$`);
});
afterAll(async () => {
  await db.drop();
});

/** Copies `query` from the source into a fresh `dst` through the framed path; its result. */
async function pass(query: string, format: 'binary' | 'text' = 'binary', dst = 'dst') {
  await target.query(`DROP TABLE IF EXISTS ${dst}`);
  await target.query(`CREATE TABLE ${dst} (g int, t text, n numeric, q int)`);
  await target.query('BEGIN');
  const out = source.query(new CopyFramesOut(`COPY (${query}) TO STDOUT (FORMAT ${format})`));
  try {
    const done = await copyIn(target, {
      table: dst,
      columns: COLUMNS,
      format: { kind: format },
      chunks: out,
      framed: true,
      idleTimeoutMs: 30_000,
    });
    await target.query('COMMIT');
    return { ...done, sourceRows: out.rowCount, messages: out.messages };
  } catch (err) {
    await target.query('ROLLBACK');
    throw err;
  }
}

/** Every row of both sides' `query`/table as text, in order. */
async function same(query: string, dst = 'dst') {
  const want = await source.query(`SELECT q::text FROM (${query}) q ORDER BY g`);
  const got = await target.query(`SELECT q::text FROM (SELECT g, t, n, q FROM ${dst}) q ORDER BY g`);
  expect(got.rows).toEqual(want.rows);
}

describe('framed COPY pass-through', () => {
  it('copies the rows exactly in binary and text, with notices mid-copy; both clients work on', async () => {
    for (const format of ['binary', 'text'] as const) {
      const done = await pass(ROWS(3000), format);
      expect(done.rows).toBe(3000);
      expect(done.sourceRows).toBe(3000);
      // binary: the trailer is a message of its own (the file header rides on the first row).
      expect(done.messages).toBe(format === 'binary' ? 3001 : 3000);
      await same(ROWS(3000));
      expect((await source.query('SELECT 41 + 1 AS n')).rows[0].n).toBe(42);
      expect((await target.query('SELECT 41 + 1 AS n')).rows[0].n).toBe(42);
    }
  });

  it('copies 0 rows', async () => {
    for (const format of ['binary', 'text'] as const) {
      const done = await pass(`${ROWS(10)} WHERE false`, format);
      expect(done).toMatchObject({ rows: 0, sourceRows: 0 });
      expect((await target.query('SELECT count(*)::int AS n FROM dst')).rows[0].n).toBe(0);
    }
  });

  it('copies rows larger than a socket chunk (up to 3 MB)', async () => {
    const big =
      'SELECT g, repeat(md5(g::text), g * 20000) AS t, g::numeric AS n, g AS q FROM generate_series(1, 5) g';
    const done = await pass(big);
    expect(done.rows).toBe(5);
    await same(big);
  });

  it('fails with the source error mid-copy, and the target keeps nothing', async () => {
    await expect(pass(FAILING)).rejects.toThrow(/division by zero/);
    expect((await target.query('SELECT count(*)::int AS n FROM dst')).rows[0].n).toBe(0);
    expect((await source.query('SELECT 1 AS n')).rows[0].n).toBe(1);
    expect((await target.query('SELECT 1 AS n')).rows[0].n).toBe(1);
  });

  it('fails with the target error mid-copy, and the source stops', async () => {
    await target.query('DROP TABLE IF EXISTS strict');
    await target.query('CREATE TABLE strict (g int, t text, n numeric CHECK (n IS NULL OR n < 100), q int)');
    await target.query('BEGIN');
    // Its own source session: it is left mid-copy, and its owner closes it (never reused).
    const own = new pg.Client({ connectionString: db.url });
    await own.connect();
    own.on('error', () => {});
    const out = own.query(new CopyFramesOut(`COPY (${ROWS(20000)}) TO STDOUT (FORMAT binary)`));
    await expect(
      copyIn(target, {
        table: 'strict',
        columns: COLUMNS,
        format: { kind: 'binary' },
        chunks: out,
        framed: true,
      }),
    ).rejects.toThrow(/check constraint/);
    await target.query('ROLLBACK');
    expect((await target.query('SELECT count(*)::int AS n FROM strict')).rows[0].n).toBe(0);
    (own as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  });
});

type Sink = { handed: Buffer[] };

const record = recordAnswer;

/** The recording's messages: the CopyData ones (headers and all), and what follows CopyDone. */
function split(bytes: Buffer): { frames: Buffer; after: Buffer; failed: boolean } {
  const frames: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const end = at + 1 + bytes.readUInt32BE(at + 1);
    if (bytes[at] === 0x64) frames.push(bytes.subarray(at, end));
    if (bytes[at] === 0x63)
      return { frames: Buffer.concat(frames), after: bytes.subarray(end), failed: false };
    if (bytes[at] === 0x45) return { frames: Buffer.concat(frames), after: bytes.subarray(at), failed: true };
    at = end;
  }
  throw new Error('no end of the copy recorded');
}

/** Replays `bytes` cut at `cuts` through a CopyFramesOut; the chunks it handed on, and pg's bytes. */
async function replay(bytes: Buffer, cuts: number[], lead?: string) {
  const pieces: Buffer[] = [];
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    pieces.push(bytes.subarray(from, at));
    from = at;
  }
  const sink: Sink = { handed: [] };
  const pgHandler = (b: Buffer) => sink.handed.push(b);
  // A socket with every piece already in; once the reader gives it back, pg reads the rest.
  let handedBack = false;
  let next = 0;
  const stream = {
    read: () => (handedBack || next === pieces.length ? null : pieces[next++]),
    listeners: () => [pgHandler],
    on: (event: string) => {
      if (event === 'data') handedBack = true;
    },
    removeListener: () => {},
    pause: () => {},
    resume: () => {
      if (handedBack) while (next < pieces.length) sink.handed.push(pieces[next++]);
    },
  };
  const copy = new CopyFramesOut('unused', lead);
  copy.submit({ stream, query: () => {} });
  const out: Buffer[] = [];
  const read = (async () => {
    for await (const chunk of copy) out.push(Buffer.from(chunk));
  })();
  // Everything is read synchronously on demand; the server's end comes through pg.
  await new Promise((r) => setImmediate(r));
  expect(next).toBe(pieces.length);
  const rest = Buffer.concat(sink.handed);
  if (rest[0] === 0x45) copy.handleError(new Error('server error'));
  else {
    copy.handleCommandComplete({ text: 'COPY 40' });
    copy.handleReadyForQuery();
  }
  const failed = await read.then(
    () => null,
    (err: Error) => err.message,
  );
  return { out, rest, failed, leading: copy.leading };
}

/** Each chunk is whole CopyData messages. */
function whole(chunk: Buffer): boolean {
  let at = 0;
  while (at + 5 <= chunk.length && chunk[at] === 0x64) at += 1 + chunk.readUInt32BE(at + 1);
  return at === chunk.length && chunk.length > 0;
}

describe('CopyFramesOut over recorded server bytes', () => {
  const check = async (
    bytes: Buffer,
    cuts: number[],
    lead?: { sql: string; value: string; skip: number },
  ) => {
    const { frames, after } = split(bytes.subarray(lead?.skip ?? 0));
    const { out, rest, failed, leading } = await replay(bytes, cuts, lead?.sql);
    expect(leading).toBe(lead?.value ?? null);
    const at = `${cuts.length} cuts from ${cuts[0]}`;
    expect(failed).toBeNull();
    expect(out.every(whole), at).toBe(true);
    expect(Buffer.concat(out).equals(frames), at).toBe(true);
    expect(rest.equals(after), at).toBe(true);
  };
  const everySize = (bytes: Buffer, size: number) => {
    const cuts: number[] = [];
    for (let at = size; at < bytes.length; at += size) cuts.push(at);
    return cuts;
  };

  it('hands on whole CopyData messages only, cut at every byte, a notice mid-copy', async () => {
    // 40 rows and a notice after the 7th (noisy(679)).
    const query = `SELECT g, repeat('x', g) AS t, NULL::numeric AS n,
      noisy(CASE WHEN g = 7 THEN 679 ELSE g END) AS q FROM generate_series(1, 40) g`;
    for (const format of ['binary', 'text']) {
      const bytes = await record(source, `COPY (${query}) TO STDOUT (FORMAT ${format})`);
      expect(bytes.includes(Buffer.from('row 679'))).toBe(true);
      for (let at = 1; at < bytes.length; at++) await check(bytes, [at]);
      for (const size of [1, 2, 3, 4, 5, 6, 7, 11, 64]) await check(bytes, everySize(bytes, size));
    }
  }, 120_000);

  it('completes a message larger than a socket chunk, however it is cut', async () => {
    const query = `SELECT g, repeat('y', CASE WHEN g = 2 THEN 200000 ELSE g END) AS t, NULL::numeric AS n,
      g AS q FROM generate_series(1, 4) g`;
    const bytes = await record(source, `COPY (${query}) TO STDOUT (FORMAT binary)`);
    for (const size of [1, 5, 7, 4096, 65536, 100000]) await check(bytes, everySize(bytes, size));
    // Cut just before, inside and just after the big message's header.
    const start = bytes.indexOf(Buffer.from('yyyy')) - 4 - 4 * 2 - 2 - 5;
    for (let at = start - 8; at < start + 16; at++) await check(bytes, [at]);
  }, 120_000);

  it('hands a mid-copy ErrorResponse back whole, cut at every byte near it', async () => {
    const bytes = await record(source, `COPY (${FAILING}) TO STDOUT (FORMAT binary)`);
    const { frames, after, failed: errored } = split(bytes);
    expect(errored).toBe(true);
    const error = bytes.length - after.length;
    for (let at = Math.max(1, error - 400); at < bytes.length; at++) {
      const { out, rest, failed } = await replay(bytes, [at]);
      expect(failed).toBe('server error');
      expect(out.every(whole)).toBe(true);
      expect(Buffer.concat(out).equals(frames)).toBe(true);
      expect(rest.equals(after)).toBe(true);
      expect(rest.includes(Buffer.from('division by zero'))).toBe(true);
    }
  }, 120_000);

  it("reads a leading SELECT's answer off the front, cut at every byte, then the copy's messages", async () => {
    await source.query("SET statement_timeout = '9s'");
    await source.query('BEGIN');
    const bytes = await record(source, `${LIFT_SQL};\nCOPY (${ROWS(40)}) TO STDOUT (FORMAT binary)`);
    await source.query('ROLLBACK');
    await source.query('RESET statement_timeout');
    // RowDescription, DataRow, CommandComplete: the SELECT's answer, before the CopyOutResponse.
    let skip = 0;
    while (bytes[skip] !== 0x48) skip += 1 + bytes.readUInt32BE(skip + 1);
    const lead = { sql: LIFT_SQL, value: '9s', skip };
    for (let at = 1; at < skip + 60; at++) await check(bytes, [at], lead);
    for (const size of [1, 3, 7, 64]) await check(bytes, everySize(bytes, size), lead);
  }, 120_000);
});
