import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statementsAtOnce } from './statements-at-once';

// Statements sent together against a real PostgreSQL: one write on the socket, the main
// statement's rows as the answer, values bound as parameters, after an error none of the
// statements after it, and a value that cannot be sent refused before anything is.

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let client: pg.Client;
/** Writes down to the client's socket since the last call. */
let writes = 0;
const written = () => {
  const n = writes;
  writes = 0;
  return n;
};

beforeAll(async () => {
  client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  await client.query('CREATE TEMPORARY TABLE at_once (n int)');
  // What reaches the socket's handle: corked messages go down together, in one writev.
  const stream = (
    client as unknown as {
      connection: { stream: Record<'_write' | '_writev', (...a: unknown[]) => unknown> };
    }
  ).connection.stream;
  for (const name of ['_write', '_writev'] as const) {
    const down = stream[name].bind(stream);
    stream[name] = (...a: unknown[]) => {
      writes++;
      return down(...a);
    };
  }
});
afterAll(async () => {
  await client.end();
});

describe('statementsAtOnce', () => {
  it('sends every statement in one write and answers the last one’s rows', async () => {
    written();
    const r = await statementsAtOnce(
      client,
      [
        { text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' },
        {
          text: 'DECLARE c NO SCROLL CURSOR FOR SELECT g, $1::text AS t FROM generate_series(1, $2::int) g',
          values: ["it's", 3],
        },
      ],
      { text: 'FETCH FORWARD 2 FROM c' },
    );
    expect(written()).toBe(1);
    expect(r.rows).toEqual([
      [1, "it's"],
      [2, "it's"],
    ]);
    expect(r.fields.map((f) => f.name)).toEqual(['g', 't']);
    expect(client.getTransactionStatus()).toBe('T');
    const rest = await client.query({ text: 'FETCH FORWARD 5 FROM c', rowMode: 'array' });
    expect(rest.rows).toEqual([[3, "it's"]]);
    await client.query('COMMIT');
  });

  it('stops at the first error: nothing after it runs, and the session goes on after ROLLBACK', async () => {
    const err = await statementsAtOnce(
      client,
      [
        { text: 'BEGIN' },
        { text: 'INSERT INTO at_once VALUES (1)' },
        { text: 'SELECT 1 / $1::int', values: [0] },
      ],
      { text: 'INSERT INTO at_once VALUES (2) RETURNING n' },
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '22012' });
    // The transaction BEGIN opened is aborted, not ended.
    await expect(client.query('SELECT 1')).rejects.toMatchObject({ code: '25P02' });
    await client.query('ROLLBACK');
    expect((await client.query('SELECT count(*)::int AS n FROM at_once')).rows).toEqual([{ n: 0 }]);
  });

  it('parses each statement alone: a second statement inside one is refused', async () => {
    const err = await statementsAtOnce(client, [{ text: 'BEGIN READ ONLY' }], {
      text: 'SELECT 1; COMMIT; INSERT INTO at_once VALUES (3)',
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '42601' });
    await client.query('ROLLBACK');
    expect((await client.query('SELECT count(*)::int AS n FROM at_once')).rows).toEqual([{ n: 0 }]);
  });

  it('answers the main statement’s rows with statements after it, all in one write', async () => {
    written();
    const r = await statementsAtOnce(
      client,
      [
        { text: 'BEGIN' },
        { text: 'INSERT INTO at_once VALUES ($1)', values: [7] },
        // Rows of the statements around the main one are not the answer.
        { text: 'SELECT 41 AS before, $1::text', values: ['no'] },
      ],
      { text: 'SELECT n, $1::text AS t FROM at_once', values: ['seen'] },
      [{ text: 'DELETE FROM at_once RETURNING n' }, { text: 'SELECT 43 AS after' }, { text: 'COMMIT' }],
    );
    expect(written()).toBe(1);
    expect(r.rows).toEqual([[7, 'seen']]);
    expect(r.command).toBe('SELECT');
    expect(client.getTransactionStatus()).toBe('I');
    expect((await client.query('SELECT count(*)::int AS n FROM at_once')).rows).toEqual([{ n: 0 }]);
  });

  it('fails when a statement after the main one fails, and what follows it does not run', async () => {
    const err = await statementsAtOnce(client, [{ text: 'BEGIN' }], { text: 'SELECT 1' }, [
      { text: 'INSERT INTO at_once VALUES (1 / 0)' },
      { text: 'COMMIT' },
    ]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '22012' });
    expect(client.getTransactionStatus()).toBe('E');
    await client.query('ROLLBACK');
  });

  it('refuses a value pg cannot send before anything is sent, wherever it is', async () => {
    const bad = {
      toPostgres() {
        throw new Error('no text for this value');
      },
    };
    const insert = { text: 'INSERT INTO at_once VALUES ($1)', values: [bad] };
    for (const [before, main, after] of [
      [[{ text: 'BEGIN' }, insert], { text: 'SELECT 1' }, []],
      [[{ text: 'BEGIN' }], { text: 'SELECT $1::int', values: [bad] }, []],
      [[{ text: 'BEGIN' }], { text: 'SELECT 1' }, [insert]],
    ] as const) {
      written();
      const err = await statementsAtOnce(client, before, main, after).catch((e: unknown) => e);
      expect((err as Error).message).toBe('no text for this value');
      expect(written()).toBe(0);
      expect(client.getTransactionStatus()).toBe('I');
    }
    expect((await client.query('SELECT count(*)::int AS n FROM at_once')).rows).toEqual([{ n: 0 }]);
  });

  it("tells the types the server gave a statement's parameters, in the same write", async () => {
    written();
    let types: number[] | null = null;
    const r = await statementsAtOnce(
      client,
      [
        { text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' },
        {
          // Inferred from their places: timestamptz, integer, numeric, text.
          text: `DECLARE typed NO SCROLL CURSOR FOR SELECT g FROM generate_series(1, 3) g
            WHERE now() > $1 AND g > $2 AND g::numeric >= $3 AND g::text <> $4`,
          values: ['2000-01-01T00:00:00Z', 0, 1.5, 'x'],
          parameterTypes: (oids) => {
            types = oids;
          },
        },
      ],
      { text: 'FETCH FORWARD 5 FROM typed' },
      [{ text: 'COMMIT' }],
    );
    expect(written()).toBe(1);
    expect(r.rows).toEqual([[2], [3]]);
    expect(types).toEqual([1184, 23, 1700, 25]);
    // The next statement's answer is its own: no description is left waiting on the session.
    expect((await client.query('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
  });

  it('asks for the types once a round trip, and not at all when a statement before fails', async () => {
    await expect(
      statementsAtOnce(
        client,
        [
          { text: 'SELECT $1::int', values: [1], parameterTypes: () => {} },
          { text: 'SELECT $1::int', values: [1], parameterTypes: () => {} },
        ],
        { text: 'SELECT 1' },
      ),
    ).rejects.toThrow(/one statement of a round trip/);
    let told = false;
    await expect(
      statementsAtOnce(
        client,
        [
          { text: 'SELECT 1 / 0' },
          {
            text: 'SELECT $1::int',
            values: [1],
            parameterTypes: () => {
              told = true;
            },
          },
        ],
        { text: 'SELECT 1' },
      ),
    ).rejects.toThrow(/division by zero/);
    const connection = (client as unknown as { connection: { listenerCount(e: string): number } }).connection;
    expect(connection.listenerCount('parameterDescription')).toBe(0);
    expect(told).toBe(false);
    expect((await client.query('SELECT 2 AS n')).rows).toEqual([{ n: 2 }]);
  });
});
