import { PassThrough } from 'node:stream';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyOutStream } from './copy-out-stream';
import { recordAnswer } from './server-recording';

// The COPY reader against real PostgreSQL: through a real client, and over a COPY response
// recorded byte for byte from the server (with notices between the rows, and one that fails
// halfway) replayed in socket chunks of every awkward size, so message headers fall across
// chunk boundaries. The rows must be pg-copy-streams' rows byte for byte, and what follows the
// copy must reach pg's reader intact. Rows are short (tens of bytes): the replay writes a chunk a
// turn of the event loop, so a byte at a time costs a turn per byte.

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROWS = `SELECT g, repeat('x', g % 40) AS t, CASE WHEN g % 3 = 0 THEN NULL ELSE g::numeric / 7 END AS n,
  pg_temp.noisy(g) AS q FROM generate_series(1, 2000) g`;
const FAILING = 'SELECT g, 1 / (g - 1500) AS boom FROM generate_series(1, 2000) g';

let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  await client.query(`CREATE FUNCTION pg_temp.noisy(i int) RETURNS int LANGUAGE plpgsql AS $$
    BEGIN IF i % 97 = 0 THEN RAISE NOTICE 'row %', i; END IF; RETURN i; END $$`);
});
afterAll(async () => {
  await client.end();
});

/** The server's bytes for `text`, from the first after the query to its ReadyForQuery. */
const record = (text: string) => recordAnswer(client, text);

/** Replays `bytes` in chunks of `size` through a CopyOutStream; its rows and what pg was handed. */
async function replay(bytes: Buffer, size: number) {
  const stream = new PassThrough();
  const handed: Buffer[] = [];
  stream.on('data', (b: Buffer) => handed.push(b));
  const copy = new CopyOutStream('unused');
  copy.submit({ stream, query: () => {} });
  const out: Buffer[] = [];
  const read = (async () => {
    for await (const chunk of copy) out.push(Buffer.from(chunk));
  })();
  for (let at = 0; at < bytes.length; at += size) {
    stream.write(Buffer.from(bytes.subarray(at, at + size)));
    await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setImmediate(r));
  const rest = Buffer.concat(handed);
  if (rest[0] === 0x45) copy.handleError(new Error('server error'));
  else {
    copy.handleCommandComplete({ text: 'COPY 2000' });
    copy.handleReadyForQuery();
  }
  const failed = await read.then(
    () => null,
    (err: Error) => err.message,
  );
  return { rows: Buffer.concat(out), rest, failed };
}

async function viaCopyStreams(text: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of client.query(copyStreams.to(text))) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe('CopyOutStream', () => {
  it('reads the rows of a real client, then the client works on', async () => {
    for (const format of ['binary', 'text']) {
      const text = `COPY (${ROWS}) TO STDOUT (FORMAT ${format})`;
      const copy = client.query(new CopyOutStream(text));
      const parts: Buffer[] = [];
      for await (const c of copy) parts.push(c as Buffer);
      expect(Buffer.concat(parts).equals(await viaCopyStreams(text))).toBe(true);
      expect(copy.rowCount).toBe(2000);
      expect((await client.query('SELECT 41 + 1 AS n')).rows[0].n).toBe(42);
    }
  });

  it('fails with the server error, and the client works on', async () => {
    const copy = client.query(new CopyOutStream(`COPY (${FAILING}) TO STDOUT (FORMAT binary)`));
    await expect(
      (async () => {
        for await (const _ of copy);
      })(),
    ).rejects.toThrow(/division by zero/);
    expect((await client.query('SELECT 1 AS n')).rows[0].n).toBe(1);
  });

  it('splits messages across chunks of every size: rows exact, the rest handed back', async () => {
    const text = `COPY (${ROWS}) TO STDOUT (FORMAT binary)`;
    const expected = await viaCopyStreams(text);
    const bytes = await record(text);
    expect(bytes.includes(Buffer.from('row 97'))).toBe(true); // notices between the rows
    for (const size of [1, 2, 3, 4, 5, 6, 7, 11, 64, 333, 4096, bytes.length]) {
      const { rows, rest, failed } = await replay(bytes, size);
      expect(failed).toBeNull();
      expect(rows.equals(expected), `chunks of ${size}`).toBe(true);
      // CommandComplete then ReadyForQuery, whole.
      expect(rest[0]).toBe(0x43);
      expect(rest.subarray(5, 5 + 'COPY 2000'.length).toString()).toBe('COPY 2000');
      expect(rest[rest.length - 6]).toBe(0x5a);
    }
  });

  it('hands a mid-copy ErrorResponse back whole at every chunk size', async () => {
    const bytes = await record(`COPY (${FAILING}) TO STDOUT (FORMAT binary)`);
    for (const size of [1, 3, 5, 7, 100, bytes.length]) {
      const { rows, rest, failed } = await replay(bytes, size);
      expect(failed).toBe('server error');
      expect(rows.length).toBeGreaterThan(0);
      expect(rest[0]).toBe(0x45);
      expect(rest.includes(Buffer.from('division by zero'))).toBe(true);
      expect(rest[rest.length - 6]).toBe(0x5a);
    }
  });
});
