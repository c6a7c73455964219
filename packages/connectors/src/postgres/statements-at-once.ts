import pg from 'pg';

// Several statements of one session sent in one write and answered in one round trip: each its
// own Parse, Bind and Execute of the extended protocol, one Sync after the last. The server runs
// them in order; after an error it skips the rest up to the Sync, and the error is the answer.
// Each statement is parsed alone, so none can carry a second one (a `; COMMIT` in a user's query
// is refused as it is by a single extended-protocol statement). Only the last statement's rows
// are described and answered; the others' results are their command tags. pg's own client would
// wait for each statement's ReadyForQuery before sending the next (docs/benchmarks.md, "A
// PostgreSQL source opens in one round trip").

export type Statement = { text: string; values?: readonly unknown[] };

type Wire = {
  parse(msg: { text: string; name?: string; types?: number[] }): void;
  bind(msg: {
    portal?: string;
    statement?: string;
    values?: readonly unknown[];
    valueMapper?: (v: unknown, i: number) => unknown;
  }): void;
  execute(msg: { portal?: string; rows?: number }): void;
  sync(): void;
};

type QueryInternals = { prepare(connection: Wire): void };
const prepareValue = (pg as unknown as { utils: { prepareValue(v: unknown): unknown } }).utils.prepareValue;

/** pg's Query for the last statement, with the statements before it written ahead of it. */
class AtOnce extends pg.Query {
  /** Every statement's text, in order: what a statement counter sees (bench:latency). */
  readonly statements: readonly string[];

  constructor(
    private readonly before: readonly Statement[],
    last: pg.QueryArrayConfig,
    callback: (err: Error | undefined, result: unknown) => void,
  ) {
    super({ ...last, queryMode: 'extended' } as pg.QueryConfig, callback as never);
    this.statements = [...before.map((s) => s.text), last.text];
  }

  // pg corks the socket around prepare: everything below goes out in one write.
  prepare(connection: Wire): void {
    try {
      for (const s of this.before) {
        connection.parse({ text: s.text });
        connection.bind({ values: s.values ?? [], valueMapper: (v) => prepareValue(v) });
        connection.execute({});
      }
    } catch (err) {
      // A value pg cannot send: nothing ran; the Sync brings the session back to ready.
      connection.sync();
      (this as unknown as { handleError(e: unknown, c: Wire): void }).handleError(err, connection);
      return;
    }
    (pg.Query.prototype as unknown as QueryInternals).prepare.call(this, connection);
  }
}

/**
 * Runs `before` and then `last` in one round trip; answers `last`'s result (rows as arrays).
 * Rejects with the first statement's error that failed; the statements after it did not run.
 */
export function statementsAtOnce(
  client: pg.Client,
  before: readonly Statement[],
  last: Statement,
): Promise<pg.QueryArrayResult> {
  return new Promise((resolve, reject) => {
    const query = new AtOnce(
      before,
      { text: last.text, values: (last.values ?? []) as unknown[], rowMode: 'array' },
      (err, result) => {
        if (err) return reject(err);
        // One result per statement that answered; the last is the last statement's.
        const all = Array.isArray(result) ? result : [result];
        resolve(all[all.length - 1] as pg.QueryArrayResult);
      },
    );
    client.query(query as unknown as pg.QueryArrayConfig).catch?.(() => {});
  });
}
