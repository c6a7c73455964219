import net from 'node:net';
import mysql from 'mysql2';
import { resolveAllowed } from '../egress';
import { type PasswordCredentials, type RelationalConfig, tlsSettings } from '../relational/config';
import { networkError, scrub, withDeadline } from '../relational/errors';
import { type Connection, type ConnectorContext, ConnectorError } from '../types';

export type MysqlConnection = Connection<RelationalConfig, PasswordCredentials>;

const where = (c: RelationalConfig) => `${c.host}:${c.port}`;

const TIMEOUT_ERRNOS = new Set([1969, 3024, 1317]);
const DENIED_ERRNOS = new Set([1142, 1143, 1227, 1370]);

/** Maps anything mysql2 throws to a ConnectorError with a sanitized message. */
export function mysqlError(err: any, conn: MysqlConnection, values: readonly unknown[] = []): ConnectorError {
  const c = conn.config;
  const code: string = typeof err?.code === 'string' ? err.code : '';
  if (code === 'PROTOCOL_SEQUENCE_TIMEOUT') {
    return new ConnectorError(
      'TIMEOUT',
      `the statement did not finish within statement_timeout_seconds (${c.statement_timeout_seconds})`,
    );
  }
  const netErr = networkError(err, where(c), c.connect_timeout_seconds);
  if (netErr) return netErr;
  const secrets = [conn.credentials?.password, ...values];
  const errno: number = typeof err?.errno === 'number' ? err.errno : 0;
  if (errno === 1045) {
    return new ConnectorError(
      'AUTHENTICATION_FAILED',
      `authentication failed for user ${c.user} on ${where(c)}: check the user name and password`,
    );
  }
  if (errno === 1049) {
    return new ConnectorError('CONNECTION_FAILED', `database ${c.database} does not exist on ${where(c)}`);
  }
  if (errno === 1044) {
    return new ConnectorError(
      'PERMISSION_DENIED',
      `user ${c.user} may not use database ${c.database} on ${where(c)} (or it does not exist)`,
    );
  }
  if (errno === 1792) {
    return new ConnectorError(
      'PERMISSION_DENIED',
      'the data source is read-only: statements run in a READ ONLY transaction and cannot write',
    );
  }
  if (TIMEOUT_ERRNOS.has(errno)) {
    return new ConnectorError(
      'TIMEOUT',
      `the statement ran longer than statement_timeout_seconds (${c.statement_timeout_seconds}) and was canceled`,
    );
  }
  if (errno === 1040 || errno === 1203) {
    return new ConnectorError('CONNECTION_FAILED', `${where(c)} has too many connections`);
  }
  if (code === 'HANDSHAKE_NO_SSL_SUPPORT') {
    return new ConnectorError('CONNECTION_FAILED', `${where(c)} does not accept TLS; set ssl to false`);
  }
  const message = typeof err?.sqlMessage === 'string' ? err.sqlMessage : '';
  if (DENIED_ERRNOS.has(errno)) {
    return new ConnectorError('PERMISSION_DENIED', scrub(`permission denied: ${message}`, secrets));
  }
  if (errno > 0 && message) {
    return new ConnectorError('QUERY_FAILED', scrub(`${message} (error ${errno})`, secrets));
  }
  if (code === 'PROTOCOL_CONNECTION_LOST' || code === 'ECONNRESET') {
    return new ConnectorError('CONNECTION_FAILED', `${where(c)} closed the connection unexpectedly`);
  }
  if (/certificate|self[- ]signed|altnames/i.test(String(err?.message ?? ''))) {
    return new ConnectorError(
      'CONNECTION_FAILED',
      `TLS with ${where(c)} failed: the server certificate was not accepted`,
    );
  }
  return new ConnectorError('CONNECTION_FAILED', `could not talk to ${where(c)}`);
}

/** Tears the socket down at once: the server stops sending rows when its writes fail. */
export function destroyMysql(connection: mysql.Connection) {
  (connection as unknown as { stream?: { destroy(): void } }).stream?.destroy();
  connection.destroy();
}

export function queryMysql<T = any>(connection: mysql.Connection, sql: string): Promise<T> {
  return new Promise((resolve, reject) => {
    connection.query(sql, (err, rows) => (err ? reject(err) : resolve(rows as T)));
  });
}

async function limitStatementTime(connection: mysql.Connection, seconds: number) {
  try {
    // MariaDB: any statement, in seconds.
    await queryMysql(connection, `SET SESSION max_statement_time = ${seconds}`);
  } catch (err: any) {
    if (err?.errno !== 1193) throw err;
    // MySQL: SELECT statements, in milliseconds (others are bounded by the client deadline).
    await queryMysql(connection, `SET SESSION max_execution_time = ${seconds * 1000}`);
  }
}

/** The session settings every new (or reset) session gets. */
export async function prepareMysqlSession(
  connection: mysql.Connection,
  conn: MysqlConnection,
  readOnly: boolean,
): Promise<void> {
  await limitStatementTime(connection, conn.config.statement_timeout_seconds);
  if (readOnly) await queryMysql(connection, 'SET SESSION TRANSACTION READ ONLY');
}

/**
 * Resolves the host through the egress guard and opens the socket to the checked address
 * (the configured name stays the TLS server name), within connect_timeout_seconds. The
 * session gets the statement time limit and, for read-only sources, READ ONLY transactions:
 * at session level too, because MySQL commits implicitly before DDL and would otherwise run
 * a DROP outside the read-only transaction.
 */
export async function connectMysql(
  conn: MysqlConnection,
  ctx: ConnectorContext,
  opts: { readOnly?: boolean } = {},
): Promise<mysql.Connection> {
  const c = conn.config;
  const timeoutMs = c.connect_timeout_seconds * 1000;
  const started = Date.now();
  const timeout = () =>
    new ConnectorError('TIMEOUT', `${where(c)} did not answer within ${c.connect_timeout_seconds} seconds`);
  const resolved = await withDeadline(resolveAllowed(c.host, ctx.policy), timeoutMs, () => {}, timeout).catch(
    (err) => {
      throw mysqlError(err, conn);
    },
  );
  const tls = tlsSettings(c.ssl, c.host);
  const connection = mysql.createConnection({
    host: c.host,
    port: c.port,
    user: c.user,
    password: conn.credentials?.password ?? '',
    database: c.database,
    stream: () => {
      const socket = net.connect({ host: resolved.address, port: c.port });
      socket.setNoDelay(true);
      return socket;
    },
    connectTimeout: Math.max(1, timeoutMs - (Date.now() - started)),
    ...(tls
      ? {
          ssl: {
            rejectUnauthorized: tls.rejectUnauthorized,
            verifyIdentity: tls.rejectUnauthorized,
            ca: tls.ca,
          },
        }
      : {}),
    charset: 'utf8mb4_unicode_ci',
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    multipleStatements: false,
    // Never let a server ask this host for a local file (LOAD DATA LOCAL INFILE).
    flags: ['-LOCAL_FILES'],
  });
  // Errors after the handshake surface through the command that hit them.
  connection.on('error', () => {});
  const abort = () => destroyMysql(connection);
  ctx.signal?.addEventListener('abort', abort, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      connection.once('connect', () => resolve());
      connection.once('error', reject);
    });
    await prepareMysqlSession(connection, conn, opts.readOnly === true);
  } catch (err) {
    destroyMysql(connection);
    throw mysqlError(err, conn);
  } finally {
    ctx.signal?.removeEventListener('abort', abort);
  }
  return connection;
}

/** Says goodbye politely when the connection is still healthy, and never waits long for it. */
export async function closeMysql(connection: mysql.Connection): Promise<void> {
  await withDeadline(
    new Promise<void>((resolve) => connection.end(() => resolve())),
    1000,
    () => destroyMysql(connection),
    () => new ConnectorError('TIMEOUT', 'close timed out'),
  ).catch(() => {});
  destroyMysql(connection);
}
