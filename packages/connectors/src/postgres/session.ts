import type pg from 'pg';
import { withDeadline } from '../relational/errors';
import { type ConnectorContext, ConnectorError } from '../types';
import { closePg, connectPg, destroy, type PgConnection, pgError } from './connect';

// One pipeline session: opened through the egress guard, torn down when the run's signal
// aborts, every statement under the client-side deadline (the server's statement_timeout
// cancels first; the deadline covers a server that stops answering).

export type PgSession = {
  client: pg.Client;
  /** Runs one statement (or COPY) under the deadline. */
  timed<T>(work: Promise<T>): Promise<T>;
  /** The error to throw: canceled, or the driver's error sanitized. */
  error(err: unknown, values?: readonly unknown[]): ConnectorError;
  close(): Promise<void>;
};

export async function openPgSession(
  conn: PgConnection,
  ctx: ConnectorContext,
  signal: AbortSignal,
  opts: { readOnly?: boolean } = {},
): Promise<PgSession> {
  const client = await connectPg(conn, { ...ctx, signal }, opts);
  const abort = () => destroy(client);
  signal.addEventListener('abort', abort, { once: true });
  const c = conn.config;
  let closed = false;
  return {
    client,
    timed: (work) =>
      withDeadline(
        work,
        c.statement_timeout_seconds * 1000 + 2000,
        () => destroy(client),
        () =>
          new ConnectorError(
            'TIMEOUT',
            `a statement did not finish within statement_timeout_seconds (${c.statement_timeout_seconds})`,
          ),
      ),
    error: (err, values = []) =>
      signal.aborted ? new ConnectorError('TIMEOUT', 'the run was canceled') : pgError(err, conn, values),
    close: async () => {
      if (closed) return;
      closed = true;
      signal.removeEventListener('abort', abort);
      await closePg(client);
    },
  };
}
