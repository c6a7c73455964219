import type pg from 'pg';
import { withDeadline } from '../relational/errors';
import type { SessionKind } from '../session-pool';
import { type ConnectorContext, ConnectorError } from '../types';
import { closePg, connectPg, destroy, type PgConnection, pgError } from './connect';

// One pipeline session: opened through the egress guard (or taken from the worker's session
// pool), torn down when the run's signal aborts, every statement under the client-side deadline
// (the server's statement_timeout cancels first; the deadline covers a server that stops
// answering).

export type PgSession = {
  client: pg.Client;
  /** Runs one statement (or COPY) under the deadline. */
  timed<T>(work: Promise<T>): Promise<T>;
  /** The error to throw: canceled, or the driver's error sanitized. */
  error(err: unknown, values?: readonly unknown[]): ConnectorError;
  close(): Promise<void>;
};

/**
 * How a pooled PostgreSQL session is reset: DISCARD ALL drops temporary tables, prepared
 * statements, cursors, advisory locks, LISTENs and SET values (back to the connect-time
 * options: statement_timeout, default_transaction_read_only). It refuses to run inside a
 * transaction block, so a session left in one is never reused.
 */
function pgKind(conn: PgConnection, ctx: ConnectorContext, readOnly: boolean): SessionKind<pg.Client> {
  return {
    open: () => connectPg(conn, ctx, { readOnly }),
    async reset(client) {
      await client.query('DISCARD ALL');
      // pg remembers which named statements it has parsed on this connection; they are gone now.
      const connection = (client as unknown as { connection?: { parsedStatements?: object } }).connection;
      if (connection) connection.parsedStatements = {};
    },
    close: (client) => closePg(client),
    onGone(client, gone) {
      client.once('end', gone);
    },
  };
}

export async function openPgSession(
  conn: PgConnection,
  ctx: ConnectorContext,
  signal: AbortSignal,
  opts: { readOnly?: boolean } = {},
): Promise<PgSession> {
  const readOnly = opts.readOnly === true;
  const connectCtx = { ...ctx, signal };
  const lease = ctx.sessions
    ? await ctx.sessions.acquire(
        {
          type: 'postgres',
          config: conn.config,
          credentials: conn.credentials,
          readOnly,
          policy: ctx.policy,
        },
        pgKind(conn, connectCtx, readOnly),
      )
    : null;
  const client = lease ? lease.session : await connectPg(conn, connectCtx, { readOnly });
  // A session that saw an error, a deadline or an abort is not handed to another run.
  let broken = false;
  const abort = () => {
    broken = true;
    destroy(client);
  };
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  const c = conn.config;
  let closed = false;
  return {
    client,
    timed: (work) =>
      withDeadline(
        work,
        c.statement_timeout_seconds * 1000 + 2000,
        () => {
          broken = true;
          destroy(client);
        },
        () =>
          new ConnectorError(
            'TIMEOUT',
            `a statement did not finish within statement_timeout_seconds (${c.statement_timeout_seconds})`,
          ),
      ),
    error: (err, values = []) => {
      broken = true;
      return signal.aborted
        ? new ConnectorError('TIMEOUT', 'the run was canceled')
        : pgError(err, conn, values);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      signal.removeEventListener('abort', abort);
      if (!lease) return closePg(client);
      await lease.release(!broken && !signal.aborted && client.getTransactionStatus() === 'I');
    },
  };
}
