import type mysql from 'mysql2';
import { withDeadline } from '../relational/errors';
import type { SessionKind } from '../session-pool';
import { type ConnectorContext, ConnectorError } from '../types';
import {
  closeMysql,
  connectMysql,
  destroyMysql,
  type MysqlConnection,
  mysqlError,
  prepareMysqlSession,
} from './connect';

// One pipeline session: opened through the egress guard (or taken from the worker's session
// pool), torn down when the run's signal aborts, every wait on the server under the client-side
// deadline (the server's own statement limit applies first).

export type MysqlSession = {
  connection: mysql.Connection;
  timed<T>(work: Promise<T>): Promise<T>;
  /** A prepared statement with bound values. */
  execute<T = any>(sql: string, values: unknown[]): Promise<T>;
  error(err: unknown, values?: readonly unknown[]): ConnectorError;
  /** Ends the session; `abrupt` drops it at once (a result still streaming cannot be stopped). */
  close(abrupt?: boolean): Promise<void>;
};

/**
 * How a pooled MySQL/MariaDB session is reset: COM_RESET_CONNECTION (mysql2's `reset`) rolls
 * back, drops temporary tables, user variables and prepared statements (mysql2 forgets its
 * statement cache with it) and puts session variables back to their global values, so the
 * statement time limit and READ ONLY are set again, as on a new session.
 */
function mysqlKind(
  conn: MysqlConnection,
  ctx: ConnectorContext,
  readOnly: boolean,
): SessionKind<mysql.Connection> {
  return {
    open: () => connectMysql(conn, ctx, { readOnly }),
    async reset(connection) {
      await new Promise<void>((resolve, reject) =>
        connection.reset((err) => (err ? reject(err) : resolve())),
      );
      await prepareMysqlSession(connection, conn, readOnly);
    },
    close: (connection) => closeMysql(connection),
    onGone(connection, gone) {
      connection.once('end', gone);
      connection.once('error', gone);
    },
  };
}

export async function openMysqlSession(
  conn: MysqlConnection,
  ctx: ConnectorContext,
  signal: AbortSignal,
  opts: { readOnly?: boolean } = {},
): Promise<MysqlSession> {
  const readOnly = opts.readOnly === true;
  const connectCtx = { ...ctx, signal };
  const lease = ctx.sessions
    ? await ctx.sessions.acquire(
        { type: 'mysql', config: conn.config, credentials: conn.credentials, readOnly, policy: ctx.policy },
        mysqlKind(conn, connectCtx, readOnly),
      )
    : null;
  const connection = lease ? lease.session : await connectMysql(conn, connectCtx, { readOnly });
  // A session that saw an error, a deadline or an abort is not handed to another run.
  let broken = false;
  const abort = () => {
    broken = true;
    destroyMysql(connection);
  };
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  const c = conn.config;
  let closed = false;
  // The readers and writers close a session politely only after COMMIT or ROLLBACK (a read
  // that stopped early closes abruptly); should one still be open, the reset rolls it back.
  const timed = <T>(work: Promise<T>) =>
    withDeadline(
      work,
      c.statement_timeout_seconds * 1000 + 2000,
      () => {
        broken = true;
        destroyMysql(connection);
      },
      () =>
        new ConnectorError(
          'TIMEOUT',
          `a statement did not finish within statement_timeout_seconds (${c.statement_timeout_seconds})`,
        ),
    );
  return {
    connection,
    timed,
    execute: (sql, values) =>
      timed(
        new Promise((resolve, reject) => {
          connection.execute(sql, values as any[], (err, rows) => (err ? reject(err) : resolve(rows as any)));
        }),
      ),
    error: (err, values = []) => {
      broken = true;
      return signal.aborted
        ? new ConnectorError('TIMEOUT', 'the run was canceled')
        : mysqlError(err, conn, values);
    },
    close: async (abrupt = false) => {
      if (closed) return;
      closed = true;
      signal.removeEventListener('abort', abort);
      if (abrupt) {
        destroyMysql(connection);
        await lease?.release(false);
      } else if (lease) await lease.release(!broken && !signal.aborted);
      else await closeMysql(connection);
    },
  };
}
