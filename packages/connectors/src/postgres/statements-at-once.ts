import pg from 'pg';

// Several statements of one session sent in one write and answered in one round trip: each its
// own Parse, Bind and Execute of the extended protocol, one Sync after the last. The server runs
// them in order; after an error it skips the rest up to the Sync, and the error is the answer.
// Each statement is parsed alone, so none can carry a second one (a `; COMMIT` in a user's query
// is refused as it is by a single extended-protocol statement). One statement's rows are
// described and answered (the main one); those before and after it answer their command tags.
// pg's own client would wait for each statement's ReadyForQuery before sending the next
// (docs/scaling.md#round-trips-to-the-data-servers).

export type Statement = {
  text: string;
  values?: readonly unknown[];
  /**
   * Asks the server for the types it gave the statement's parameters (a Describe of the parsed
   * statement, answered in the same round trip): called with their OIDs, in order.
   */
  parameterTypes?: (oids: number[]) => void;
};

type Wire = {
  parse(msg: { text: string; name?: string; types?: number[] }): void;
  describe(msg: { type: 'S' | 'P'; name?: string }): void;
  once(event: 'parameterDescription', fn: (msg: { dataTypeIDs: number[] }) => void): void;
  removeListener(event: 'parameterDescription', fn: (msg: { dataTypeIDs: number[] }) => void): void;
  bind(msg: {
    portal?: string;
    statement?: string;
    values?: readonly unknown[];
    valueMapper?: (v: unknown, i: number) => unknown;
  }): void;
  execute(msg: { portal?: string; rows?: number }): void;
  sync(): void;
};

type Internals = {
  prepare(connection: Wire): void;
  handleCommandComplete(msg: unknown, connection: unknown): void;
  handleDataRow(msg: unknown): void;
};
const prepareValue = (pg as unknown as { utils: { prepareValue(v: unknown): unknown } }).utils.prepareValue;

/** Parse, Bind and Execute of one statement whose rows are not asked for (values mapped). */
function untold(connection: Wire, s: Statement): void {
  connection.parse({ text: s.text });
  // The unnamed statement just parsed: ParameterDescription, then NoData or its RowDescription
  // (pg's client reads neither; the listener below takes the first).
  if (s.parameterTypes) connection.describe({ type: 'S', name: '' });
  connection.bind({ values: s.values ?? [] });
  connection.execute({});
}

/** The statement with its values as pg sends them; throws on a value pg cannot send. */
const mapped = (s: Statement): Statement => ({
  ...s,
  values: (s.values ?? []).map((v) => prepareValue(v)),
});

/** pg's Query for the main statement, with the statements before and after it around it. */
class AtOnce extends pg.Query {
  /** Every statement's text, in order: what a statement counter sees (bench:latency). */
  readonly statements: readonly string[];

  private readonly before: readonly Statement[];
  private readonly after: readonly Statement[];

  /** Throws, before anything is sent, on a value pg cannot send. */
  constructor(
    before: readonly Statement[],
    main: pg.QueryArrayConfig,
    after: readonly Statement[],
    callback: (err: Error | undefined, result: unknown) => void,
  ) {
    super({ ...main, queryMode: 'extended' } as pg.QueryConfig, callback as never);
    this.before = before.map(mapped);
    this.after = after.map(mapped);
    // The main statement's values are mapped by pg as it binds them; a value that cannot be
    // sent would fail there, after the statements before it were written: found here instead.
    mapped({ text: main.text, values: main.values });
    this.statements = [...before.map((s) => s.text), main.text, ...after.map((s) => s.text)];
    if ([...before, ...after].filter((s) => s.parameterTypes).length > 1)
      throw new Error("one statement of a round trip may ask for its parameters' types");
  }

  /** Statements answered so far (a command tag each): rows count only while it is `before.length`. */
  private answered = 0;

  handleCommandComplete(msg: unknown, connection: unknown): void {
    this.answered++;
    (pg.Query.prototype as unknown as Internals).handleCommandComplete.call(this, msg, connection);
  }

  // A statement around the main one may answer rows (RESTORE_SQL's SELECT): nobody described
  // them, and they are not the answer.
  handleDataRow(msg: unknown): void {
    if (this.answered !== this.before.length) return;
    (pg.Query.prototype as unknown as Internals).handleDataRow.call(this, msg);
  }

  /** Stops listening for a ParameterDescription that did not come (a statement before failed). */
  unlisten: () => void = () => {};

  // pg corks the socket around prepare: everything below goes out in one write.
  prepare(connection: Wire): void {
    // One statement a round trip may ask for its parameters' types: the next ParameterDescription
    // on this connection is its.
    const asked = [...this.before, ...this.after].find((s) => s.parameterTypes);
    if (asked?.parameterTypes) {
      const told = asked.parameterTypes;
      const listener = (msg: { dataTypeIDs: number[] }) => told([...msg.dataTypeIDs]);
      connection.once('parameterDescription', listener);
      this.unlisten = () => connection.removeListener('parameterDescription', listener);
    }
    for (const s of this.before) untold(connection, s);
    (pg.Query.prototype as unknown as Internals).prepare.call(this, connection);
  }

  // pg's prepare ends with this: the main statement's Execute, then Sync. The statements after
  // it go between the two.
  _getRows(connection: Wire, rows: number | undefined): void {
    connection.execute({ portal: (this as unknown as { portal: string }).portal, rows });
    for (const s of this.after) untold(connection, s);
    connection.sync();
  }
}

/**
 * Runs `before`, `main` and `after` in one round trip; answers `main`'s result (rows as
 * arrays). Rejects with the first statement's error that failed; the statements after it did
 * not run.
 */
export function statementsAtOnce(
  client: pg.Client,
  before: readonly Statement[],
  main: Statement,
  after: readonly Statement[] = [],
): Promise<pg.QueryArrayResult> {
  return new Promise((resolve, reject) => {
    // A value pg cannot send rejects here: nothing was sent and the session stays ready.
    const query = new AtOnce(
      before,
      { text: main.text, values: (main.values ?? []) as unknown[], rowMode: 'array' },
      after,
      (err, result) => {
        query.unlisten();
        if (err) return reject(err);
        // One result per statement, in order (each statement answers one command tag).
        const all = Array.isArray(result) ? result : [result];
        resolve(all[before.length] as pg.QueryArrayResult);
      },
    );
    client.query(query as unknown as pg.QueryArrayConfig);
  });
}
