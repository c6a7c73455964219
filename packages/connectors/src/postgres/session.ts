import type pg from 'pg';
import { openRunSession } from '../relational/run-session';
import type { SessionIdentity, SessionKind } from '../session-pool';
import type { ConnectorContext, ConnectorError } from '../types';
import { closePg, connectPg, destroy, type PgConnection, pgError } from './connect';

// One pipeline session on PostgreSQL (its life: relational/run-session.ts).

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

/** What a pooled session of this data source is keyed by (session-pool.ts). */
const pgIdentity = (conn: PgConnection, ctx: ConnectorContext, readOnly: boolean): SessionIdentity => ({
  type: 'postgres',
  config: conn.config,
  credentials: conn.credentials,
  readOnly,
  policy: ctx.policy,
});

/** The pool's `warm` for a PostgreSQL session (the `sessions` capability). */
export function warmPgSession(conn: PgConnection, ctx: ConnectorContext, opts: { readOnly: boolean }): void {
  ctx.sessions?.warm(pgIdentity(conn, ctx, opts.readOnly), pgKind(conn, ctx, opts.readOnly));
}

export async function openPgSession(
  conn: PgConnection,
  ctx: ConnectorContext,
  signal: AbortSignal,
  opts: { readOnly?: boolean } = {},
): Promise<PgSession> {
  const readOnly = opts.readOnly === true;
  const run = await openRunSession({
    ctx,
    signal,
    identity: pgIdentity(conn, ctx, readOnly),
    kind: pgKind(conn, { ...ctx, signal }, readOnly),
    destroy,
    idle: (client) => client.getTransactionStatus() === 'I',
    statementTimeoutSeconds: conn.config.statement_timeout_seconds,
  });
  return {
    client: run.session,
    timed: run.timed,
    error: (err, values = []) => run.error(err, (e) => pgError(e, conn, values)),
    close: () => run.close(),
  };
}
