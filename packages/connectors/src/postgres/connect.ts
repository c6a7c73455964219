import pg from 'pg';
import { classifyAddress, resolveAllowed } from '../egress';
import { type PasswordCredentials, type RelationalConfig, tlsSettings } from '../relational/config';
import { networkError, scrub, withDeadline } from '../relational/errors';
import { type Connection, type ConnectorContext, ConnectorError } from '../types';
import { cancelRequest } from './cancel';

export type PgConnection = Connection<RelationalConfig, PasswordCredentials>;

// Date and time values stay as PostgreSQL prints them: turning `timestamp without time zone`
// into a JS Date would shift it by the API host's zone. int8 and numeric stay strings (exact).
const RAW_TEXT = new Set([1082, 1083, 1114, 1184, 1186, 1266, 1182, 1183, 1115, 1185, 1187, 1270]);

export const pgTypes = {
  getTypeParser(oid: number, format?: string): (value: string) => unknown {
    if (RAW_TEXT.has(oid)) return (v: string) => v;
    return pg.types.getTypeParser(oid, (format ?? 'text') as 'text');
  },
};

const where = (c: RelationalConfig) => `${c.host}:${c.port}`;

/** Maps anything the driver throws to a ConnectorError with a sanitized message. */
export function pgError(err: any, conn: PgConnection, values: readonly unknown[] = []): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const c = conn.config;
  const net = networkError(err, where(c), c.connect_timeout_seconds);
  if (net) return net;
  const secrets = [conn.credentials?.password, ...values];
  const code: string = typeof err?.code === 'string' ? err.code : '';
  switch (code) {
    case '28P01':
    case '28000':
      return new ConnectorError(
        'AUTHENTICATION_FAILED',
        `authentication failed for user ${c.user} on ${where(c)}: check the user name and password`,
      );
    case '3D000':
      return new ConnectorError('CONNECTION_FAILED', `database ${c.database} does not exist on ${where(c)}`);
    case '57014':
      return new ConnectorError(
        'TIMEOUT',
        `the statement ran longer than statement_timeout_seconds (${c.statement_timeout_seconds}) and was canceled`,
      );
    case '42501':
      return new ConnectorError('PERMISSION_DENIED', scrub(`permission denied: ${err.message}`, secrets));
    case '25006':
      return new ConnectorError(
        'PERMISSION_DENIED',
        'the data source is read-only: statements run in a READ ONLY transaction and cannot write',
      );
    case '53300':
      return new ConnectorError('CONNECTION_FAILED', `${where(c)} has no free connection slots`);
    default:
      break;
  }
  // A connection pooler in front of the server (PgBouncer) refuses the session's startup
  // settings, statement_timeout and the read-only `options`: docs/connectors/postgres.md.
  if (/unsupported startup parameter/i.test(String(err?.message ?? ''))) {
    return new ConnectorError(
      'CONNECTION_FAILED',
      `${where(c)} refused the session's settings (${scrub(err.message, secrets)}): a connection pooler such as PgBouncer answers there; point the data source at the PostgreSQL server itself`,
    );
  }
  // The server shut the session down (a restart or shutdown: 57P01–57P03) or the connection
  // itself failed (class 08): the connection is gone, not the statement at fault.
  if (/^57P0[123]$|^08/.test(code)) {
    return new ConnectorError('CONNECTION_FAILED', `${where(c)} closed the connection unexpectedly`);
  }
  if (/^[0-9A-Z]{5}$/.test(code) && typeof err.message === 'string') {
    // A server error about the statement (syntax, types, constraints). Only the primary
    // message: `detail` often quotes row values.
    return new ConnectorError('QUERY_FAILED', scrub(`${err.message} (SQLSTATE ${code})`, secrets));
  }
  const message = String(err?.message ?? '');
  if (/timeout expired/i.test(message)) {
    return new ConnectorError(
      'TIMEOUT',
      `${where(c)} did not complete the connection within ${c.connect_timeout_seconds} seconds`,
    );
  }
  if (/does not support SSL/i.test(message)) {
    return new ConnectorError('CONNECTION_FAILED', `${where(c)} does not accept TLS; set ssl to false`);
  }
  if (/self[- ]signed|certificate|altnames/i.test(message)) {
    return new ConnectorError(
      'CONNECTION_FAILED',
      `TLS with ${where(c)} failed: the server certificate was not accepted`,
    );
  }
  // "not queryable": the server went away between statements (a restart, say) and pg
  // refuses the next one on the dead client.
  if (/terminated|Connection terminated|ended|not queryable/i.test(message)) {
    return new ConnectorError('CONNECTION_FAILED', `${where(c)} closed the connection unexpectedly`);
  }
  return new ConnectorError('CONNECTION_FAILED', `could not talk to ${where(c)}`);
}

/**
 * Kills the socket: used when a deadline passes or the caller aborts. A statement under way is
 * also canceled on the server (cancel.ts): a closed socket alone leaves one that writes nothing
 * (a sort, an aggregate) running on the user's database until it next writes.
 */
export function destroy(client: pg.Client) {
  const cancel = cancelRequest(client);
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  cancel?.();
}

export type PgClientSetup = {
  /** For `new pg.Client(config)` (or a library that makes its client from a config). */
  config: pg.ClientConfig & { connection: pg.Connection };
  /** The client's wire connection: its socket can be paused (change data capture). */
  connection: pg.Connection;
};

/**
 * Resolves the host through the egress guard and configures a client for the checked address
 * (the name is kept for TLS), within connect_timeout_seconds; `readOnly` makes every
 * transaction of the session read-only from the first statement on; `replication` opens a
 * replication session. The connection refuses to send the password in cleartext where that
 * is not safe, whoever makes the client from this config.
 */
export async function pgClientConfig(
  conn: PgConnection,
  ctx: ConnectorContext,
  opts: { readOnly?: boolean; replication?: boolean; applicationName?: string } = {},
): Promise<PgClientSetup> {
  const c = conn.config;
  const timeoutMs = c.connect_timeout_seconds * 1000;
  const timeout = () =>
    new ConnectorError('TIMEOUT', `${where(c)} did not answer within ${c.connect_timeout_seconds} seconds`);
  const started = Date.now();
  const resolved = await withDeadline(resolveAllowed(c.host, ctx.policy), timeoutMs, () => {}, timeout).catch(
    (err) => {
      throw pgError(err, conn);
    },
  );
  const password = conn.credentials?.password ?? '';
  const ssl = tlsSettings(c.ssl, c.host);
  // A server that asks for the password in cleartext gets it only over TLS, or on a private
  // network the data source explicitly opted into: otherwise anyone on the path (or a server
  // that merely pretends to be PostgreSQL) reads it. SCRAM and MD5 never send it as such.
  const cleartextAllowed =
    ssl !== false || (c.allow_private_hosts === true && classifyAddress(resolved.address) === 'private');
  let cleartextAsked = false;
  // The wire connection is made here, not by pg.Client, so the guard listens before the
  // client attaches its own handlers: it runs before the password is asked for.
  const connection = new pg.Connection({ ssl, keepAlive: false, encoding: 'utf8' } as pg.ConnectionConfig);
  connection.on('authenticationCleartextPassword', () => {
    cleartextAsked = true;
  });
  const config = {
    host: resolved.address,
    port: c.port,
    database: c.database,
    user: c.user,
    // A function, so pg never falls back to PGPASSWORD or a .pgpass file of this host.
    password: async () => {
      if (cleartextAsked && !cleartextAllowed) {
        throw new ConnectorError(
          'AUTHENTICATION_FAILED',
          `${where(c)} asked for the password in cleartext; Sluice sends it only over TLS (set ssl) or to a private host with allow_private_hosts`,
        );
      }
      return password;
    },
    ssl,
    connectionTimeoutMillis: Math.max(1, timeoutMs - (Date.now() - started)),
    statement_timeout: c.statement_timeout_seconds * 1000,
    application_name: opts.applicationName ?? 'sluice',
    ...(opts.readOnly ? { options: '-c default_transaction_read_only=on' } : {}),
    // A walsender session for one database (change data capture: docs/cdc.md).
    ...(opts.replication ? { replication: 'database' } : {}),
    types: pgTypes,
    connection,
  };
  return { config, connection };
}

/** A client of pgClientConfig, connected; `ctx.signal` aborts the attempt. */
export async function connectPg(
  conn: PgConnection,
  ctx: ConnectorContext,
  opts: { readOnly?: boolean; replication?: boolean } = {},
): Promise<pg.Client> {
  const { config } = await pgClientConfig(conn, ctx, opts);
  const client = new pg.Client(config);
  // After a failure the client may still emit 'error'; the caller already has its answer.
  client.on('error', () => {});
  const abort = () => destroy(client);
  ctx.signal?.addEventListener('abort', abort, { once: true });
  try {
    await client.connect();
  } catch (err) {
    await closePg(client);
    throw pgError(err, conn);
  } finally {
    ctx.signal?.removeEventListener('abort', abort);
  }
  return client;
}

/** Ends the session; never throws and never waits more than a second for a polite goodbye. */
export async function closePg(client: pg.Client): Promise<void> {
  await withDeadline(
    client.end().catch(() => {}),
    1000,
    () => destroy(client),
    () => new ConnectorError('TIMEOUT', 'close timed out'),
  ).catch(() => {});
}
