import type mysql from 'mysql2';
import { withDeadline } from '../relational/errors';
import { type ConnectorContext, ConnectorError } from '../types';
import { closeMysql, connectMysql, destroyMysql, type MysqlConnection, mysqlError } from './connect';

// One pipeline session: opened through the egress guard, torn down when the run's signal
// aborts, every wait on the server under the client-side deadline (the server's own
// statement limit applies first).

export type MysqlSession = {
  connection: mysql.Connection;
  timed<T>(work: Promise<T>): Promise<T>;
  /** A prepared statement with bound values. */
  execute<T = any>(sql: string, values: unknown[]): Promise<T>;
  error(err: unknown, values?: readonly unknown[]): ConnectorError;
  /** Ends the session; `abrupt` drops it at once (a result still streaming cannot be stopped). */
  close(abrupt?: boolean): Promise<void>;
};

export async function openMysqlSession(
  conn: MysqlConnection,
  ctx: ConnectorContext,
  signal: AbortSignal,
  opts: { readOnly?: boolean } = {},
): Promise<MysqlSession> {
  const connection = await connectMysql(conn, { ...ctx, signal }, opts);
  const abort = () => destroyMysql(connection);
  signal.addEventListener('abort', abort, { once: true });
  const c = conn.config;
  let closed = false;
  const timed = <T>(work: Promise<T>) =>
    withDeadline(
      work,
      c.statement_timeout_seconds * 1000 + 2000,
      () => destroyMysql(connection),
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
    error: (err, values = []) =>
      signal.aborted ? new ConnectorError('TIMEOUT', 'the run was canceled') : mysqlError(err, conn, values),
    close: async (abrupt = false) => {
      if (closed) return;
      closed = true;
      signal.removeEventListener('abort', abort);
      if (abrupt) destroyMysql(connection);
      else await closeMysql(connection);
    },
  };
}
