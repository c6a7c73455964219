import { createPrivateKey } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import {
  assertAddressAllowed,
  EgressBlockedError,
  type EgressPolicy,
  guardedLookup,
  resolveAllowed,
} from '../egress';
import { networkError, scrub } from '../relational/errors';
import { type ConnectorContext, ConnectorError } from '../types';
import type { SnowflakeConfig, SnowflakeCredentials } from './config';

// One Snowflake session through `snowflake-sdk` (loaded on first use). Every HTTP connection the
// SDK opens — login, queries, result polling and the result chunks whose URLs Snowflake names —
// goes through agents whose DNS lookup is the egress guard, so no answer of the remote can
// steer the SDK to a host the policy forbids.

export type SnowflakeConnection = { config: SnowflakeConfig; credentials: SnowflakeCredentials | null };

/** The parts of the SDK we use (its own typings are a global module declaration). */
export type SfStatement = {
  getColumns(): { getName(): string; getType(): string; getScale(): number | undefined }[] | undefined;
  getNumUpdatedRows(): number | undefined;
  streamRows(opts?: { start?: number; end?: number }): NodeJS.ReadableStream & AsyncIterable<unknown>;
  cancel(cb?: (err?: unknown) => void): void;
};
export type SfConnection = {
  connect(cb: (err: any) => void): void;
  destroy(cb: (err: any) => void): void;
  execute(opts: Record<string, unknown>): SfStatement;
};

let sdk: Promise<any> | undefined;

export async function loadSdk(): Promise<any> {
  sdk ??= import('snowflake-sdk').then((m) => {
    const s = m.default ?? m;
    // The SDK logs to a file and the console by default; we keep no driver logs.
    s.configure({ logLevel: 'OFF', additionalLogToConsole: false });
    return s;
  });
  return sdk;
}

/** The last socket error of a connection's agents: the SDK retries it into a mere timeout. */
type SocketFailures = { last: Error | null };

/** An IP-literal host skips DNS, so the agent checks it before connecting. */
function guardedAgent<A extends http.Agent>(agent: A, policy: EgressPolicy, failures: SocketFailures): A {
  const create = (agent as any).createConnection.bind(agent);
  (agent as any).createConnection = (options: any, cb: any) => {
    const host = String(options.host ?? options.hostname ?? '');
    if (net.isIP(host.replace(/^\[|\]$/g, ''))) {
      try {
        assertAddressAllowed(host, policy, host);
      } catch (err) {
        const s = new net.Socket();
        process.nextTick(() => s.destroy(err as Error));
        return s;
      }
    }
    const socket = create(options, cb) as net.Socket | undefined;
    socket?.once?.('error', (err: Error) => {
      failures.last = err;
    });
    return socket;
  };
  return agent;
}

export function accessUrlOf(config: SnowflakeConfig): URL {
  return new URL(config.access_url ?? `https://${config.account}.snowflakecomputing.com`);
}

/** Where the connector goes, for messages: the host only (never credentials). */
export const whereOf = (config: SnowflakeConfig) => accessUrlOf(config).host;

const AUTH_CODES = new Set(['390100', '390144', '390114', '390104', '390112', '390318', '390302', '394304']);
const PERMISSION_CODES = new Set(['390189', '390201', '002037', '003001']);

/** The secrets of one call: password, private key and passphrase, plus bound values. */
export function secretsOf(conn: SnowflakeConnection, values: readonly unknown[] = []): unknown[] {
  const c = conn.credentials as Record<string, string> | null;
  return [c?.password, c?.private_key, c?.private_key_passphrase, ...values];
}

/** SDK errors as ConnectorErrors with messages we write (or Snowflake's SQL message, scrubbed). */
export function snowflakeError(
  err: any,
  conn: SnowflakeConnection,
  values: readonly unknown[] = [],
): ConnectorError {
  if (err instanceof ConnectorError) return err;
  if (err instanceof EgressBlockedError) return new ConnectorError('PRIVATE_HOST_BLOCKED', err.message);
  const where = whereOf(conn.config);
  const cause = err?.cause ?? err?.response?.cause;
  // The guard's refusal may arrive wrapped by axios and by the SDK.
  for (let e = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (e instanceof EgressBlockedError || e?.code === 'PRIVATE_HOST_BLOCKED')
      return new ConnectorError(
        'PRIVATE_HOST_BLOCKED',
        new EgressBlockedError(String(e.host ?? where)).message,
      );
  }
  const net = networkError(cause ?? err, where, conn.config.timeout_seconds);
  if (net && net !== cause) return net;
  const code = err?.code === undefined || err?.code === null ? '' : String(err.code);
  if (AUTH_CODES.has(code)) {
    const expired = code === '390114' || code === '390112' || code === '394304';
    return new ConnectorError(
      'AUTHENTICATION_FAILED',
      expired
        ? `Snowflake rejected the sign-in: the authentication token has expired (${code})`
        : `Snowflake rejected the credentials of user ${conn.config.username} (${code})`,
    );
  }
  if (PERMISSION_CODES.has(code)) {
    return new ConnectorError(
      'PERMISSION_DENIED',
      `Snowflake refused access (${code}): ${scrub(String(err?.message ?? ''), secretsOf(conn, values))}`,
    );
  }
  const status = err?.response?.statusCode ?? err?.response?.status;
  if (status === 429)
    return new ConnectorError(
      'REMOTE_ERROR',
      `Snowflake is rate-limiting requests (HTTP 429); try again later`,
    );
  if (status === 401 || status === 403)
    return new ConnectorError('PERMISSION_DENIED', `Snowflake refused the request (HTTP ${status})`);
  if (typeof status === 'number')
    return new ConnectorError('REMOTE_ERROR', `Snowflake answered HTTP ${status}`);
  if (
    /timed? ?out|ETIMEDOUT|ECONNABORTED/i.test(
      `${err?.message ?? ''} ${cause?.code ?? ''} ${cause?.message ?? ''}`,
    )
  )
    return new ConnectorError(
      'TIMEOUT',
      `no answer from ${where} within ${conn.config.timeout_seconds} seconds`,
    );
  // Only what Snowflake answered about the statement carries its message (the SDK's own
  // errors use six-digit codes too, 4xxxxx, for network and client problems).
  if (err?.sqlState || (err?.name === 'OperationFailedError' && /^\d{6}$/.test(code))) {
    return new ConnectorError(
      'QUERY_FAILED',
      `${scrub(String(err?.message ?? 'the statement failed'), secretsOf(conn, values))}${code ? ` (${code})` : ''}`,
    );
  }
  return new ConnectorError('CONNECTION_FAILED', `the request to ${where} failed`);
}

export type SnowflakeSession = {
  connection: SfConnection;
  /** Runs a statement to its end and answers its rows (for small answers). */
  all(sqlText: string, binds?: unknown[]): Promise<{ statement: SfStatement; rows: unknown[][] }>;
  /** Starts a streamed statement; rows are pulled through statement.streamRows(). */
  stream(sqlText: string, binds?: unknown[]): Promise<SfStatement>;
  close(): Promise<void>;
};

function privateKeyOf(c: { private_key: string; private_key_passphrase?: string }): string {
  try {
    // The SDK only applies a passphrase to key files; an encrypted PEM is decrypted here.
    return createPrivateKey({ key: c.private_key, format: 'pem', passphrase: c.private_key_passphrase })
      .export({ format: 'pem', type: 'pkcs8' })
      .toString();
  } catch {
    throw new ConnectorError(
      'AUTHENTICATION_FAILED',
      'the private key could not be read (wrong passphrase or not a PEM key)',
    );
  }
}

/** Signs in (egress-checked) and answers a session; the caller closes it. */
export async function openSnowflake(
  conn: SnowflakeConnection,
  ctx: ConnectorContext,
): Promise<SnowflakeSession> {
  const { config } = conn;
  const credentials = conn.credentials;
  if (!credentials) throw new ConnectorError('AUTHENTICATION_FAILED', 'the data source has no credentials');
  const url = accessUrlOf(config);
  if (url.protocol === 'http:' && config.allow_private_hosts !== true) {
    throw new ConnectorError('PRIVATE_HOST_BLOCKED', 'plain http access_url needs allow_private_hosts');
  }
  try {
    await resolveAllowed(url.hostname, ctx.policy);
  } catch (err) {
    throw snowflakeError(err, conn);
  }
  const s = await loadSdk();
  const lookup = guardedLookup(ctx.policy) as any;
  const timeoutMs = config.timeout_seconds * 1000;
  const failures: SocketFailures = { last: null };
  const httpsAgent = guardedAgent(
    new https.Agent({ lookup, keepAlive: true, timeout: timeoutMs }),
    ctx.policy,
    failures,
  );
  const httpAgent = guardedAgent(
    new http.Agent({ lookup, keepAlive: true, timeout: timeoutMs }),
    ctx.policy,
    failures,
  );
  const auth =
    'password' in credentials
      ? { password: credentials.password }
      : { authenticator: 'SNOWFLAKE_JWT', privateKey: privateKeyOf(credentials) };
  const connection: SfConnection = s.createConnection({
    account: config.account,
    username: config.username,
    ...auth,
    ...(config.warehouse ? { warehouse: config.warehouse } : {}),
    ...(config.database ? { database: config.database } : {}),
    ...(config.schema ? { schema: config.schema } : {}),
    ...(config.role ? { role: config.role } : {}),
    accessUrl: url.origin,
    application: 'Sluice',
    timeout: timeoutMs,
    sfRetryMaxLoginRetries: 1,
    sfRetryMaxNumRetries: 1,
    largeResultSetRetryMaxNumRetries: 2,
    clientSessionKeepAlive: false,
    // Below this many bound values per statement the SDK sends binds inline (above it, it
    // would upload them to a stage, which the sink never needs).
    arrayBindingThreshold: 1_000_000,
    // Every connection through the egress-guarded agents.
    agentClass: (o: { protocol?: string }) => (o.protocol === 'https:' ? httpsAgent : httpAgent),
  });
  const destroyAgents = () => {
    httpsAgent.destroy();
    httpAgent.destroy();
  };
  try {
    await withTimeout(
      new Promise<void>((resolve, reject) => connection.connect((err) => (err ? reject(err) : resolve()))),
      timeoutMs + 2000,
      ctx.signal,
    );
  } catch (err) {
    destroyAgents();
    // A login that never got a connection fails for the connection's reason (a refused port).
    const timedOut = err instanceof ConnectorError && err.code === 'TIMEOUT';
    throw snowflakeError(timedOut && failures.last ? failures.last : err, conn);
  }

  const execute = (sqlText: string, binds: unknown[] | undefined, streamResult: boolean) => {
    let handle: SfStatement | undefined;
    const work = new Promise<{ statement: SfStatement; rows: unknown[][] }>((resolve, reject) => {
      handle = connection.execute({
        sqlText,
        ...(binds && binds.length > 0 ? { binds } : {}),
        rowMode: 'array',
        streamResult,
        // Snowflake itself stops a statement that outlives the deadline (no credits burnt after).
        parameters: { STATEMENT_TIMEOUT_IN_SECONDS: config.timeout_seconds },
        complete: (err: any, statement: SfStatement, rows?: unknown[][]) =>
          err ? reject(err) : resolve({ statement, rows: rows ?? [] }),
      });
    });
    // On our deadline or a cancel the statement is canceled as well, not left running.
    return withTimeout(work, timeoutMs + 2000, ctx.signal, () => handle?.cancel(() => {}));
  };
  return {
    connection,
    all: (sqlText, binds) => execute(sqlText, binds, false),
    stream: async (sqlText, binds) => (await execute(sqlText, binds, true)).statement,
    close: async () => {
      await new Promise<void>((resolve) => connection.destroy(() => resolve())).catch(() => {});
      destroyAgents();
    },
  };
}

/** A deadline over the SDK's own retries (and the caller's cancel). */
export async function withTimeout<T>(
  work: Promise<T>,
  ms: number,
  signal?: AbortSignal,
  onStop?: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onStop?.();
      reject(
        new ConnectorError('TIMEOUT', `Snowflake did not answer within ${Math.round(ms / 1000)} seconds`),
      );
    }, ms);
    onAbort = () => {
      onStop?.();
      reject(new ConnectorError('TIMEOUT', 'the execution was canceled'));
    };
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    work.catch(() => {});
  }
}

/** A result column's type as payload columns name it (what the engine and sinks understand). */
export function payloadType(type: string, scale: number | undefined): string {
  switch (type.toLowerCase()) {
    case 'fixed':
      return scale && scale > 0 ? 'numeric' : 'bigint';
    case 'real':
      return 'double';
    case 'boolean':
      return 'boolean';
    case 'date':
      return 'date';
    case 'time':
      return 'time';
    case 'timestamp_ntz':
      return 'timestamp';
    case 'timestamp_ltz':
    case 'timestamp_tz':
      return 'timestamptz';
    case 'variant':
    case 'object':
    case 'array':
      return 'json';
    case 'binary':
      return 'bytea';
    default:
      return 'text';
  }
}

/** Snowflake's name for a column type in schema documents. */
export function snowflakeTypeName(type: string, scale: number | undefined): string {
  const t = type.toLowerCase();
  if (t === 'fixed') return scale && scale > 0 ? `NUMBER(38,${scale})` : 'NUMBER';
  if (t === 'real') return 'FLOAT';
  return t.toUpperCase();
}

/** A value from the SDK as plain data: its date and timestamp objects become ISO text. */
export function plain(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (
    typeof v === 'object' &&
    !Array.isArray(v) &&
    !Buffer.isBuffer(v) &&
    typeof (v as any).toJSON === 'function'
  )
    return (v as any).toJSON();
  return v;
}
