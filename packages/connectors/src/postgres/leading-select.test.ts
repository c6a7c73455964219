import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyFramesOut } from './copy-frames-out';
import { CopyOutStream } from './copy-out-stream';
import { LeadingSelect } from './leading-select';
import { recordAnswer } from './server-recording';
import { LIFT_SQL } from './statement-limit';

// A SELECT in the same message as a `COPY … TO STDOUT`, ahead of it, against real PostgreSQL:
// its answer recorded byte for byte and read off the front however the socket cuts it, and both
// COPY readers lifting statement_timeout that way for a copy that outlasts it.

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const COPY_ROWS =
  "COPY (SELECT g, repeat('x', g) AS t FROM generate_series(1, 50) g) TO STDOUT (FORMAT binary)";
/** Rows that take ~250 ms to come out: longer than the session's statement_timeout below. */
const SLOW = 'COPY (SELECT g, pg_sleep(0.05) FROM generate_series(1, 5) g) TO STDOUT (FORMAT binary)';

let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
});
afterAll(async () => {
  await client.end();
});

/** Where the first message that is not `codes` starts. */
function firstNot(bytes: Buffer, codes: string): number {
  let at = 0;
  while (codes.includes(String.fromCharCode(bytes[at]))) at += 1 + bytes.readUInt32BE(at + 1);
  return at;
}

/** `bytes` through one LeadingSelect cut at `cuts`: what it handed on, and after which piece. */
function through(bytes: Buffer, cuts: number[]) {
  const lead = new LeadingSelect();
  const handed: Buffer[] = [];
  let first = -1;
  let from = 0;
  for (const [i, at] of [...cuts, bytes.length].entries()) {
    const out = lead.through(Buffer.from(bytes.subarray(from, at)));
    from = at;
    if (out === null) continue;
    if (first < 0) first = i;
    handed.push(out);
  }
  return { value: lead.value, handed: Buffer.concat(handed), first };
}

describe('LeadingSelect over recorded server bytes', () => {
  it("reads the SELECT's answer off the front, cut at every byte, and hands on the rest as it is", async () => {
    await client.query("SET statement_timeout = '7s'");
    try {
      await client.query('BEGIN');
      const bytes = await recordAnswer(client, `${LIFT_SQL};\n${COPY_ROWS}`);
      await client.query('ROLLBACK');
      // RowDescription, DataRow, CommandComplete, then the copy's CopyOutResponse.
      const copyStarts = firstNot(bytes, 'TDC');
      expect(bytes[copyStarts]).toBe(0x48);
      for (let at = 1; at < copyStarts + 40; at++) {
        const { value, handed, first } = through(bytes, [at]);
        expect(value, `cut at ${at}`).toBe('7s');
        expect(handed.equals(bytes.subarray(copyStarts)), `cut at ${at}`).toBe(true);
        // Nothing is handed on before the answer is whole.
        expect(first, `cut at ${at}`).toBe(at < copyStarts + 1 ? 1 : 0);
      }
      for (const size of [1, 2, 3, 5, 7, 13]) {
        const cuts: number[] = [];
        for (let at = size; at < bytes.length; at += size) cuts.push(at);
        const { value, handed } = through(bytes, cuts);
        expect(value).toBe('7s');
        expect(handed.equals(bytes.subarray(copyStarts))).toBe(true);
      }
    } finally {
      await client.query('RESET statement_timeout');
    }
  });

  it("hands on the SELECT's error, and the server runs no COPY after it", async () => {
    const bytes = await recordAnswer(client, `SELECT 1 / 0;\n${COPY_ROWS}`);
    for (let at = 1; at < 30; at++) {
      const { value, handed } = through(bytes, [at]);
      expect(value).toBeNull();
      expect(handed[0]).toBe(0x45);
      expect(handed.includes(Buffer.from('division by zero'))).toBe(true);
      expect(handed.includes(Buffer.from([0x48]))).toBe(false);
    }
  });
});

describe('a COPY whose statement limit is lifted in its own message', () => {
  const readers = {
    framed: (text: string, lead?: string) => new CopyFramesOut(text, lead),
    rows: (text: string, lead?: string) => new CopyOutStream(text, lead),
  };

  for (const [name, reader] of Object.entries(readers)) {
    it(`outlasts statement_timeout (${name}), answers the limit it had, and lifts it for the transaction`, async () => {
      await client.query("SET statement_timeout = '100ms'");
      try {
        await client.query('BEGIN');
        const copy = client.query(reader(SLOW, LIFT_SQL));
        let bytes = 0;
        for await (const chunk of copy) bytes += chunk.length;
        expect(copy.rowCount).toBe(5);
        expect(bytes).toBeGreaterThan(0);
        expect(copy.leading).toBe('100ms');
        const now = await client.query("SELECT current_setting('statement_timeout') AS t");
        expect(now.rows[0].t).toBe('0');
        await client.query('COMMIT');
        expect((await client.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('100ms');
      } finally {
        await client.query('ROLLBACK').catch(() => {});
        await client.query('RESET statement_timeout');
      }
    });

    it(`without the lift the same copy is canceled (${name}), and the client works on`, async () => {
      await client.query("SET statement_timeout = '100ms'");
      try {
        const copy = client.query(reader(SLOW));
        await expect(
          (async () => {
            for await (const _ of copy);
          })(),
        ).rejects.toThrow(/statement timeout/);
        expect(copy.leading).toBeNull();
        expect((await client.query('SELECT 1 AS n')).rows[0].n).toBe(1);
      } finally {
        await client.query('RESET statement_timeout');
      }
    });
  }
});
