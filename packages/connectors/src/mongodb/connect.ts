import net from 'node:net';
import type { MongoClient, MongoClientOptions } from 'mongodb';
import { assertAddressAllowed, EgressBlockedError, resolveAllowed } from '../egress';
import { networkError, scrub } from '../relational/errors';
import { type Connection, type ConnectorContext, ConnectorError } from '../types';
import type { MongoConfig, MongoCredentials } from './config';
import { startEgressProxy } from './egress-proxy';

// Connecting: the driver (loaded on first use) gets the hosts and options as an object, never
// a connection string with the password in it, so no driver message can quote it. Every host
// goes through the egress guard: the configured ones are resolved and checked before the
// client exists (an unknown or blocked host fails at once), and every socket the driver opens
// afterwards (configured hosts, members a replica set announces, monitors, the pool; names and
// IP literals alike) goes through the client's own SOCKS5 endpoint (egress-proxy.ts), which
// checks the destination before it connects. A refused member also closes the client, so the
// call answers PRIVATE_HOST_BLOCKED instead of carrying on with the members it could reach.

export type MongoConnection = Connection<MongoConfig, MongoCredentials>;

/** Seconds to reach a usable server (connect, TLS, hello, authentication). */
export const CONNECT_TIMEOUT_SECONDS = 5;

type Driver = typeof import('mongodb');
let driver: Promise<Driver> | null = null;
export const loadDriver = (): Promise<Driver> => {
  driver ??= import('mongodb');
  return driver;
};

const hostOf = (entry: string) => {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
  return { host: (m?.[1] ?? entry).replace(/^\[|\]$/g, ''), port: Number(m?.[2] ?? 27017) };
};

export const where = (c: MongoConfig) => c.hosts.join(',');

export type MongoHandle = {
  client: MongoClient;
  close(): Promise<void>;
  blocked(): EgressBlockedError | null;
  /** The last connect to a server that failed below the driver (egress-proxy.ts). */
  upstreamError(): Error | null;
  /** Why the last attempt to reach a server failed (a selection timeout says only "timed out"). */
  lastHeartbeatError(): unknown;
};

export async function connectMongo(conn: MongoConnection, ctx: ConnectorContext): Promise<MongoHandle> {
  const c = conn.config;
  for (const entry of c.hosts) {
    const { host, port } = hostOf(entry);
    if (port < 1 || port > 65535)
      throw new ConnectorError('CONNECTION_FAILED', `${entry}: the port must be 1 to 65535`);
    await resolveAllowed(host, ctx.policy).catch((err) => {
      throw mongoError(err, conn);
    });
  }
  const { MongoClient } = await loadDriver();
  const proxy = await startEgressProxy(ctx.policy, { connectTimeoutMs: CONNECT_TIMEOUT_SECONDS * 1000 });
  const password = conn.credentials?.password;
  const options: MongoClientOptions = {
    appName: 'sluice',
    tls: c.tls,
    authSource: c.auth_source,
    ...(c.username ? { auth: { username: c.username, password: password ?? '' } } : {}),
    ...(c.replica_set ? { replicaSet: c.replica_set } : {}),
    // One host without a replica-set name: talk to it alone, never to members it announces.
    directConnection: c.hosts.length === 1 && !c.replica_set,
    serverSelectionTimeoutMS: CONNECT_TIMEOUT_SECONDS * 1000,
    connectTimeoutMS: CONNECT_TIMEOUT_SECONDS * 1000,
    maxPoolSize: 4,
    useBigInt64: true,
    ignoreUndefined: true,
    // Every socket of this client, monitoring and pool included, connects through the guard.
    proxyHost: proxy.host,
    proxyPort: proxy.port,
  };
  const hosts = c.hosts.map((h) => (h.includes(':') && !h.startsWith('[') && net.isIPv6(h) ? `[${h}]` : h));
  const client = new MongoClient(`mongodb://${hosts.join(',')}/`, options);
  let blocked: EgressBlockedError | null = null;
  // Checked synchronously: the driver opens its monitoring socket to a new member right after
  // this event, so a refused literal is caught before any command runs there.
  const refuse = (err: unknown, host: string) => {
    blocked ??= err instanceof EgressBlockedError ? err : new EgressBlockedError(host);
    void client.close(true).catch(() => {});
  };
  // The proxy already keeps every socket away from a refused address; this only ends the call
  // early. Literals are judged at once; names as soon as they resolve.
  client.on('serverOpening', (ev) => {
    const { host } = hostOf(ev.address);
    if (net.isIP(host) === 0) {
      resolveAllowed(host, ctx.policy).catch((err) => {
        if (err instanceof EgressBlockedError) refuse(err, host);
      });
      return;
    }
    try {
      assertAddressAllowed(host, ctx.policy);
    } catch (err) {
      refuse(err, host);
    }
  });
  let lastHeartbeatError: unknown = null;
  client.on('serverHeartbeatFailed', (ev) => {
    lastHeartbeatError = ev.failure;
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    ctx.signal?.removeEventListener('abort', abort);
    await client.close(true).catch(() => {});
    await proxy.close();
  };
  const abort = () => void close();
  ctx.signal?.addEventListener('abort', abort, { once: true });
  return {
    client,
    close,
    blocked: () => blocked ?? proxy.blocked(),
    upstreamError: () => proxy.upstreamError(),
    lastHeartbeatError: () => lastHeartbeatError,
  };
}

/** Runs `work` with a connected client and always closes it; errors come out sanitized. */
export async function withMongo<T>(
  conn: MongoConnection,
  ctx: ConnectorContext,
  work: (client: MongoClient) => Promise<T>,
  secrets: readonly unknown[] = [],
): Promise<T> {
  const handle = await connectMongo(conn, ctx);
  try {
    const result = await work(handle.client);
    const blocked = handle.blocked();
    if (blocked) throw blocked;
    return result;
  } catch (err) {
    throw failure(err, conn, ctx, handle, secrets);
  } finally {
    await handle.close();
  }
}

/** The error to throw for a failed call on an open handle. */
export function failure(
  err: unknown,
  conn: MongoConnection,
  ctx: ConnectorContext,
  handle: MongoHandle,
  secrets: readonly unknown[] = [],
): ConnectorError {
  const blocked = handle.blocked();
  if (blocked) return new ConnectorError('PRIVATE_HOST_BLOCKED', blocked.message);
  if (ctx.signal?.aborted && !(err instanceof ConnectorError))
    return new ConnectorError('TIMEOUT', 'the call was canceled');
  const heartbeat = handle.lastHeartbeatError();
  if ((err as { name?: string })?.name === 'MongoServerSelectionError' && heartbeat) {
    const mapped = mongoError(heartbeat, conn, secrets);
    if (mapped.code !== 'CONNECTION_FAILED' || !/could not talk/.test(mapped.message)) return mapped;
  }
  // No server was usable because the connects themselves failed (a refused port).
  const upstream = handle.upstreamError();
  const reason = upstream && networkError(upstream, where(conn.config), CONNECT_TIMEOUT_SECONDS);
  if ((err as { name?: string })?.name === 'MongoServerSelectionError' && reason) return reason;
  return mongoError(err, conn, secrets);
}

const causes = (err: any): any[] => {
  const out: any[] = [];
  for (let e = err, i = 0; e && i < 6; e = e.cause, i++) out.push(e);
  return out;
};

/** Errors of the servers a failed server selection tried. */
function selectionErrors(err: any): any[] {
  const servers: Map<string, any> | undefined = err?.reason?.servers;
  if (!servers || typeof servers.values !== 'function') return [];
  return [...servers.values()].map((s) => s?.error).filter(Boolean);
}

/** Maps anything the driver throws to a ConnectorError with a message safe to store. */
export function mongoError(err: any, conn: MongoConnection, values: readonly unknown[] = []): ConnectorError {
  const c = conn.config;
  const at = where(c);
  const secrets = [conn.credentials?.password, ...values];
  if (err instanceof ConnectorError) return err;
  for (const e of causes(err)) {
    if (e instanceof EgressBlockedError) return new ConnectorError('PRIVATE_HOST_BLOCKED', e.message);
  }
  const name: string = err?.name ?? '';
  if (name === 'MongoServerSelectionError') {
    for (const e of selectionErrors(err)) {
      const mapped = mongoError(e, conn, values);
      if (mapped.code !== 'CONNECTION_FAILED' || !/could not talk/.test(mapped.message)) return mapped;
    }
    return new ConnectorError(
      'TIMEOUT',
      `no MongoDB server of ${at} was usable within ${CONNECT_TIMEOUT_SECONDS} seconds` +
        (c.replica_set ? ` (replica set ${c.replica_set})` : ''),
    );
  }
  for (const e of causes(err)) {
    const net = networkError(e, at, CONNECT_TIMEOUT_SECONDS);
    if (net?.code === 'CONNECTION_FAILED' && c.tls && /closed the connection/.test(net.message))
      return new ConnectorError(
        'CONNECTION_FAILED',
        `${at} closed the connection during the TLS handshake: does the server accept TLS? (tls is true)`,
      );
    if (net) return net;
  }
  if (name === 'MongoNetworkTimeoutError' || /timed out/i.test(String(err?.message)))
    return new ConnectorError('TIMEOUT', `${at} did not answer within ${CONNECT_TIMEOUT_SECONDS} seconds`);
  if (name === 'MongoTopologyClosedError' || name === 'MongoClientClosedError')
    return new ConnectorError('CONNECTION_FAILED', `the connection to ${at} was closed`);
  // MongoBulkWriteError.writeErrors is one WriteError or an array of them.
  const writeErrors = err?.writeErrors;
  const first = Array.isArray(writeErrors) ? (writeErrors[0] ?? null) : (writeErrors ?? null);
  const code = Number(first?.code ?? err?.code);
  const codeName: string = first?.codeName ?? err?.codeName ?? '';
  switch (code) {
    case 18:
      return new ConnectorError(
        'AUTHENTICATION_FAILED',
        `authentication failed for user ${c.username ?? '(none)'} (auth_source ${c.auth_source}) on ${at}: check the user name and password`,
      );
    case 13:
      return new ConnectorError(
        'PERMISSION_DENIED',
        c.username
          ? `user ${c.username} is not authorized for this operation on database ${c.database}`
          : `${at} requires authentication: set username and password`,
      );
    case 50:
    case 262:
      return new ConnectorError(
        'TIMEOUT',
        'the operation exceeded its time limit on the server and was stopped',
      );
    case 11000:
    case 11001: {
      // The server's message quotes the duplicate value: keep only where it happened.
      const index = /index: (\S+)/.exec(String(first?.errmsg ?? err?.message))?.[1];
      return new ConnectorError('QUERY_FAILED', `duplicate key (E11000)${index ? ` on index ${index}` : ''}`);
    }
    default:
      break;
  }
  if (
    Number.isFinite(code) &&
    code > 0 &&
    (name.startsWith('MongoServer') || name === 'MongoBulkWriteError')
  ) {
    const message = String(first?.errmsg ?? err?.errmsg ?? err?.message ?? '');
    return new ConnectorError('QUERY_FAILED', scrub(`${message} (${codeName || 'code'} ${code})`, secrets));
  }
  if (name === 'MongoInvalidArgumentError' || name === 'MongoParseError' || name === 'BSONError')
    return new ConnectorError('INVALID_STATEMENT', scrub(String(err?.message), secrets));
  if (/certificate|self[- ]signed|SSL|TLS/i.test(String(err?.message)))
    return new ConnectorError(
      'CONNECTION_FAILED',
      `TLS with ${at} failed: check tls and the server certificate`,
    );
  return new ConnectorError('CONNECTION_FAILED', `could not talk to ${at}`);
}
