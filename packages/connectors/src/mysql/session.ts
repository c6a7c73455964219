import type mysql from 'mysql2';
import { openRunSession } from '../relational/run-session';
import type { SessionIdentity, SessionKind } from '../session-pool';
import type { ConnectorContext, ConnectorError } from '../types';
import { closeMysql, connectMysql, type MysqlConnection, mysqlError, prepareMysqlSession } from './connect';
import { destroyAndKill } from './kill';

// One pipeline session on MySQL/MariaDB (its life: relational/run-session.ts).

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

/** What a pooled session of this data source is keyed by (session-pool.ts). */
const mysqlIdentity = (conn: MysqlConnection, ctx: ConnectorContext, readOnly: boolean): SessionIdentity => ({
  type: 'mysql',
  config: conn.config,
  credentials: conn.credentials,
  readOnly,
  policy: ctx.policy,
});

/** The pool's `warm` for a MySQL/MariaDB session (the `sessions` capability). */
export function warmMysqlSession(
  conn: MysqlConnection,
  ctx: ConnectorContext,
  opts: { readOnly: boolean },
): void {
  ctx.sessions?.warm(mysqlIdentity(conn, ctx, opts.readOnly), mysqlKind(conn, ctx, opts.readOnly));
}

export async function openMysqlSession(
  conn: MysqlConnection,
  ctx: ConnectorContext,
  signal: AbortSignal,
  opts: { readOnly?: boolean } = {},
): Promise<MysqlSession> {
  const readOnly = opts.readOnly === true;
  // The readers and writers close a session politely only after COMMIT or ROLLBACK (a read
  // that stopped early closes abruptly); should one still be open, the reset rolls it back.
  const run = await openRunSession({
    ctx,
    signal,
    identity: mysqlIdentity(conn, ctx, readOnly),
    kind: mysqlKind(conn, { ...ctx, signal }, readOnly),
    // Torn down mid-statement (an abort, a deadline): the statement is stopped on the server too.
    destroy: destroyAndKill(conn, ctx),
    statementTimeoutSeconds: conn.config.statement_timeout_seconds,
  });
  const connection = run.session;
  return {
    connection,
    timed: run.timed,
    execute: (sql, values) =>
      run.timed(
        new Promise((resolve, reject) => {
          connection.execute(sql, values as any[], (err, rows) => (err ? reject(err) : resolve(rows as any)));
        }),
      ),
    error: (err, values = []) => run.error(err, (e) => mysqlError(e, conn, values)),
    close: run.close,
  };
}
