import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { copyIn } from './copy-in';
import { type ScratchDatabase, scratchDatabase } from './scratch-database';

// `COPY … FROM STDIN` fed with COPY bytes that are not framed yet (the MySQL encoders, CSV), each
// chunk framed as it goes (copy-frames-in.ts), against real PostgreSQL; the framed pass-through
// from a PostgreSQL source is in copy-frames.test.ts.

const COLUMNS = ['g', 't', 'n', 'q'];

let db: ScratchDatabase;
let target: pg.Client;

beforeAll(async () => {
  db = await scratchDatabase(`copy_in_${process.pid}`);
  target = await db.connect();
});
afterAll(async () => {
  await db.drop();
});

describe('unframed COPY input (each chunk framed as it goes)', () => {
  /** Loads `chunks` as COPY text into a fresh `dst`; the result, or the error. */
  async function load(chunks: AsyncIterable<Uint8Array>, idleTimeoutMs = 30_000) {
    await target.query('DROP TABLE IF EXISTS dst');
    await target.query('CREATE TABLE dst (g int, t text, n numeric, q int)');
    await target.query('BEGIN');
    try {
      const done = await copyIn(target, {
        table: 'dst',
        columns: COLUMNS,
        format: { kind: 'text' },
        chunks,
        idleTimeoutMs,
      });
      await target.query('COMMIT');
      return done;
    } catch (err) {
      await target.query('ROLLBACK').catch(() => {});
      throw err;
    }
  }
  const text = Buffer.from(
    Array.from(
      { length: 500 },
      (_, i) => `${i}\t${'é'.repeat(i % 40)}\t${i % 3 ? i / 8 : '\\N'}\t${i}\n`,
    ).join(''),
  );

  it('takes the bytes cut anywhere, empty chunks included', async () => {
    for (const size of [1, 7, 4096, text.length]) {
      const done = await load(
        (async function* () {
          for (let p = 0; p < text.length; p += size) {
            yield text.subarray(p, p + size);
            yield Buffer.alloc(0);
          }
        })(),
      );
      expect(done).toEqual({ rows: 500, bytes: text.length });
      const r = await target.query(
        "SELECT string_agg(concat_ws(E'\\t', g, t, coalesce(n::text, '\\N'), q), E'\\n' ORDER BY g) AS s FROM dst",
      );
      expect(`${r.rows[0].s}\n`).toBe(text.toString());
    }
  });

  it('fails when the input fails, keeps nothing, and the session works on', async () => {
    const err = await load(
      (async function* () {
        yield text.subarray(0, 1000);
        throw new Error('the source broke');
      })(),
    ).catch((e) => e);
    expect(err.message).toBe('the source broke');
    expect((await target.query('SELECT count(*)::int AS n FROM dst')).rows[0].n).toBe(0);
  });

  it("asks for the input's first chunk before the server has answered the COPY", async () => {
    let answered = false;
    const connection = (target as unknown as { connection: NodeJS.EventEmitter }).connection;
    const onAnswer = () => {
      answered = true;
    };
    connection.on('copyInResponse', onAnswer);
    let askedBeforeAnswer: boolean | null = null;
    try {
      const done = await load(
        (async function* () {
          askedBeforeAnswer = !answered;
          yield text;
        })(),
      );
      expect(done.rows).toBe(500);
    } finally {
      connection.off('copyInResponse', onAnswer);
    }
    expect(askedBeforeAnswer).toBe(true);
    expect(answered).toBe(true);
  });

  it('ends the input it asked for when the server refuses the COPY', async () => {
    let ended = false;
    await target.query('BEGIN');
    const err = await copyIn(target, {
      table: 'no_such_table',
      columns: COLUMNS,
      format: { kind: 'text' },
      chunks: (async function* () {
        try {
          yield text;
          yield text;
        } finally {
          ended = true;
        }
      })(),
    }).catch((e) => e);
    await target.query('ROLLBACK');
    expect(err.code).toBe('42P01');
    await vi.waitFor(() => expect(ended).toBe(true));
  });

  it('stops a stalled input at the idle bound', async () => {
    const stalled = new pg.Client({ connectionString: db.url });
    await stalled.connect();
    stalled.on('error', () => {}); // the bound destroys its connection
    await stalled.query('BEGIN');
    const err = await copyIn(stalled, {
      table: 'dst',
      columns: COLUMNS,
      format: { kind: 'text' },
      idleTimeoutMs: 300,
      chunks: (async function* () {
        yield text.subarray(0, 1000);
        await new Promise((r) => setTimeout(r, 5_000));
      })(),
    }).catch((e) => e);
    expect(err.code).toBe('TIMEOUT');
    await stalled.end().catch(() => {});
  });
});
