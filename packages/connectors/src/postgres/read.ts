import type { SourceOutput, StepContext } from '@sluice/engine';
import type pg from 'pg';
import { type CursorTracker, cursorTracker, rowsOutput } from '../relational/cursor';
import { signalOf, sourceQuery } from '../relational/pipeline';
import type { ConnectorContext } from '../types';
import type { PgConnection } from './connect';
import { columnsOf } from './operations';
import { openPgSession } from './session';

// A pipeline source on PostgreSQL: the query runs in a read-only transaction behind a
// server-side cursor and is fetched in batches as the payload is read, one batch ahead of the
// one downstream, so a large table is never held. Each FETCH is its own statement:
// statement_timeout bounds the work of one batch, not the time the steps downstream take to
// consume it.

const BATCH = 5000;
const CURSOR = 'sluice_source';
const FETCH = `FETCH FORWARD ${BATCH} FROM ${CURSOR}`;

export async function readPg(
  conn: PgConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const query = sourceQuery(step, 'postgres');
  const session = await openPgSession(conn, ctx, signalOf(step, ctx), { readOnly: true });
  const { client, timed } = session;
  const fetch = () => timed(client.query<unknown[]>({ text: FETCH, rowMode: 'array' }));
  let first: pg.QueryArrayResult;
  let columns: Awaited<ReturnType<typeof columnsOf>>;
  let cursor: CursorTracker | null;
  try {
    await timed(client.query('BEGIN READ ONLY'));
    // The extended protocol even without parameters: one statement, never `…; COMMIT; …`.
    const declare = {
      text: `DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${query.text}`,
      values: query.values,
      queryMode: 'extended',
    } as pg.QueryConfig;
    await timed(client.query(declare));
    first = await fetch();
    columns = await timed(columnsOf(client, first.fields));
    cursor = cursorTracker(step, columns);
  } catch (err) {
    await session.close();
    throw session.error(err, query.values);
  }

  async function* batches(): AsyncGenerator<unknown[][]> {
    try {
      let res = first;
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
  return rowsOutput(columns, batches(), cursor);
}
