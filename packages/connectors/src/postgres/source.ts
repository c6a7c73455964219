import type { SourceOutput, StepContext } from '@sluice/engine';
import type pg from 'pg';
import { type CursorTracker, cursorTracker, rowsOutput } from '../relational/cursor';
import { signalOf, sourceQuery } from '../relational/pipeline';
import type { ConnectorContext } from '../types';
import type { PgConnection } from './connect';
import { pgNativeRows } from './copy-out';
import { columnsOf } from './operations';
import { openPgSession } from './session';
import { statementsAtOnce } from './statements-at-once';

// A pipeline source on PostgreSQL: the query runs in a read-only transaction behind a
// server-side cursor and is fetched in batches as the payload is read, one batch ahead of the
// one downstream, so a large table is never held. Each FETCH is its own statement:
// statement_timeout bounds the work of one batch, not the time the steps downstream take to
// consume it. Beside the batches the payload offers the same rows as COPY output (copy-out.ts);
// a consumer takes one or the other; only one row is fetched before it does.

const BATCH = 5000;
const CURSOR = 'sluice_source';
const fetchOf = (n: number) => `FETCH FORWARD ${n} FROM ${CURSOR}`;

export async function readPg(
  conn: PgConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const query = sourceQuery(step, 'postgres');
  const session = await openPgSession(conn, ctx, signalOf(step, ctx), { readOnly: true });
  const { client, timed } = session;
  const fetch = (n = BATCH) => timed(client.query<unknown[]>({ text: fetchOf(n), rowMode: 'array' }));
  let probe: pg.QueryArrayResult;
  let columns: Awaited<ReturnType<typeof columnsOf>>;
  let cursor: CursorTracker | null;
  /** The types the server gave the query's parameters (a COPY of it inlines them: copy-out.ts). */
  let declared: number[] | null = null;
  try {
    // One round trip (statements-at-once.ts): one snapshot for the whole read, whichever form
    // the consumer takes (COPY and the cursor's max() then see the same rows); the query
    // declared through the extended protocol even without parameters (one statement, never
    // `…; COMMIT; …`), the types the server gave its parameters told with it; and one row, so a
    // query that fails on its first row fails here and the columns are known. The rest of the
    // first batch is fetched only if the batches are read.
    probe = await timed(
      statementsAtOnce(
        client,
        [
          { text: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' },
          {
            text: `DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${query.text}`,
            values: query.values,
            ...(query.values.length > 0 && {
              parameterTypes: (oids: number[]) => {
                declared = oids;
              },
            }),
          },
        ],
        { text: fetchOf(1) },
      ),
    );
    columns = await timed(columnsOf(client, probe.fields));
    cursor = cursorTracker(step, columns);
  } catch (err) {
    await session.close();
    throw session.error(err, query.values);
  }

  async function* batches(): AsyncGenerator<unknown[][]> {
    try {
      let res = probe;
      if (probe.rows.length === 1) {
        const rest = await fetch(BATCH - 1);
        res = { ...rest, rows: [...probe.rows, ...rest.rows] };
      }
      for (;;) {
        // The next FETCH runs on the server while this batch is downstream: one batch ahead,
        // never more. A failure surfaces at its await (the catch only keeps it from being
        // reported as unhandled when the consumer stops first).
        const next = res.rows.length < BATCH ? null : fetch();
        next?.catch(() => {});
        if (res.rows.length > 0) yield res.rows;
        if (!next) break;
        res = await next;
      }
      await timed(client.query('COMMIT'));
    } catch (err) {
      throw session.error(err, query.values);
    } finally {
      await session.close();
    }
  }
  const native = pgNativeRows(session, step, query, probe.fields, columns, declared);
  return rowsOutput(columns, batches(), cursor, native ?? undefined);
}
