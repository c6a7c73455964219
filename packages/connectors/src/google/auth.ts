import http from 'node:http';
import https from 'node:https';
import type { JWT } from 'google-auth-library';
import { guardedLookup, resolveAllowed } from '../egress';
import { type ConnectorContext, ConnectorError } from '../types';

// What the Google kinds (BigQuery, Workspace) share: the service-account key, the JWT flow of
// Google's own auth library, and where requests may go.
//
// Where requests go is never data-source config. Production talks to Google's fixed hosts;
// an operator may replace them with one root (SLUICE_GOOGLE_API_ROOT: a proxy, a test fake).
// The key file's token_uri must be Google's token endpoint or lie under that operator root,
// so a user cannot make us send a signed assertion (or API calls with its token) to a host of
// their choosing. Every host is still checked by the egress guard.

export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

export type ServiceAccount = {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  project_id?: string;
  token_uri?: string;
};

const authFailed = (message: string) => new ConnectorError('AUTHENTICATION_FAILED', message);

/** The key file's fields we use; messages never quote the file. */
export function parseServiceAccount(json: unknown): ServiceAccount {
  let parsed: unknown;
  try {
    parsed = typeof json === 'string' ? JSON.parse(json) : null;
  } catch {
    parsed = null;
  }
  const sa = parsed as Partial<ServiceAccount> | null;
  if (!sa || typeof sa !== 'object')
    throw authFailed('service_account_json is not a service-account key file');
  if (typeof sa.client_email !== 'string' || sa.client_email === '')
    throw authFailed('service_account_json has no client_email');
  if (typeof sa.private_key !== 'string' || !sa.private_key.includes('PRIVATE KEY'))
    throw authFailed('service_account_json has no PEM private_key');
  if (sa.token_uri !== undefined && typeof sa.token_uri !== 'string')
    throw authFailed('service_account_json has an invalid token_uri');
  return sa as ServiceAccount;
}

/** The API root to call: Google's default or the operator's override. */
export function apiRoot(ctx: ConnectorContext, googleDefault: string): string {
  return (ctx.endpoints?.googleApiRoot ?? googleDefault).replace(/\/+$/, '');
}

/** The token endpoint the JWT flow posts to; a foreign token_uri is refused. */
export function tokenUrl(sa: ServiceAccount, ctx: ConnectorContext): string {
  const wanted = sa.token_uri ?? GOOGLE_TOKEN_URL;
  if (wanted === GOOGLE_TOKEN_URL) return wanted;
  const override = ctx.endpoints?.googleApiRoot;
  let url: URL | null = null;
  try {
    url = new URL(wanted);
  } catch {
    url = null;
  }
  if (override && url && url.origin === new URL(override).origin) return url.toString();
  throw authFailed(`the service account's token_uri must be ${GOOGLE_TOKEN_URL}`);
}

export type GoogleClient = {
  jwt: JWT;
  /** Origins the client may call (token endpoint and API roots). */
  origins: Set<string>;
  /** Checks a host against the egress policy before an SDK connects to it. */
  checkHost(url: string): Promise<void>;
  close(): void;
};

/** The client libraries `googleClient` loads on its first call (a worker's warm start loads them ahead). */
export const googleAuthModules = () => Promise.all([import('google-auth-library'), import('gaxios')]);

/**
 * A JWT client whose every request (token exchange and API calls made through it) goes
 * through guarded agents and only to the allowed origins.
 */
export async function googleClient(
  sa: ServiceAccount,
  ctx: ConnectorContext,
  opts: { scopes: string[]; roots: string[]; timeoutMs: number },
): Promise<GoogleClient> {
  const token = tokenUrl(sa, ctx);
  const origins = new Set([new URL(token).origin, ...opts.roots.map((r) => new URL(r).origin)]);
  const checkHost = async (url: string) => {
    const u = new URL(url);
    if (!origins.has(u.origin))
      throw new ConnectorError('CONNECTION_FAILED', `requests to ${u.host} are not allowed`);
    try {
      await resolveAllowed(u.hostname, ctx.policy);
    } catch (err) {
      throw hostError(err, u.hostname);
    }
  };
  for (const o of origins) await checkHost(o);
  const lookup = guardedLookup(ctx.policy) as any;
  const agents = {
    'http:': new http.Agent({ keepAlive: true, lookup }),
    'https:': new https.Agent({ keepAlive: true, lookup }),
  };
  const [{ JWT }, { Gaxios }] = await googleAuthModules();
  const transporter = new Gaxios({
    timeout: opts.timeoutMs,
    agent: (u: URL) => agents[u.protocol as 'http:' | 'https:'],
    // Retries of 429/5xx are the caller's decision; the token request is not retried.
    retry: false,
  } as any);
  transporter.interceptors.request.add({
    resolved: async (config) => {
      // google-auth-library always posts to Google's token URL; token_uri decides where.
      const target = String(config.url) === GOOGLE_TOKEN_URL ? token : String(config.url);
      await checkHost(target);
      config.url = new URL(target);
      return config;
    },
  });
  const jwt = new JWT({
    email: sa.client_email,
    key: sa.private_key,
    keyId: sa.private_key_id,
    scopes: opts.scopes,
    transporter,
  } as any);
  return {
    jwt,
    origins,
    checkHost,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

function hostError(err: unknown, host: string): Error {
  if (err instanceof ConnectorError) return err;
  if ((err as { code?: string }).code === 'PRIVATE_HOST_BLOCKED') return err as Error;
  if ((err as { code?: string }).code === 'ENOTFOUND')
    return new ConnectorError('HOST_NOT_FOUND', `host ${host} was not found`);
  return new ConnectorError('CONNECTION_FAILED', `could not resolve ${host}`);
}

type GoogleErrorShape = {
  code?: number | string;
  status?: number;
  errors?: { reason?: string; message?: string }[];
  response?: { status?: number; data?: unknown };
  message?: string;
};

/** Reasons of Google's error body (`error.errors[].reason`, or OAuth's `error`). */
export function googleReason(err: unknown): {
  status: number | null;
  reason: string | null;
  message: string | null;
} {
  const e = (err ?? {}) as GoogleErrorShape;
  const data = e.response?.data as
    | {
        error?:
          | string
          | { errors?: { reason?: string; message?: string }[]; status?: string; message?: string };
      }
    | undefined;
  let reason: string | null = null;
  let message: string | null = null;
  if (data && typeof data.error === 'string') reason = data.error;
  else if (data && typeof data.error === 'object') {
    reason = data.error.errors?.[0]?.reason ?? data.error.status ?? null;
    message = data.error.message ?? null;
  }
  if (!reason && Array.isArray(e.errors)) {
    reason = e.errors[0]?.reason ?? null;
    message = e.errors[0]?.message ?? null;
  }
  if (!reason && typeof e.message === 'string') {
    const m = /^(invalid_grant|invalid_client|unauthorized_client|access_denied)\b/.exec(e.message);
    if (m) reason = m[1];
  }
  const status =
    typeof e.code === 'number'
      ? e.code
      : (e.response?.status ?? (typeof e.status === 'number' ? e.status : null));
  return { status, reason, message };
}

const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/**
 * A Google client or SDK error as a sanitized ConnectorError. `detail` says whether a
 * provider message may be shown (query errors: the message names the SQL problem, never a
 * credential); otherwise only the reason is.
 */
export function googleError(err: unknown, what: string, detail = false): Error {
  if (err instanceof ConnectorError) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'PRIVATE_HOST_BLOCKED')
    return new ConnectorError('PRIVATE_HOST_BLOCKED', (err as Error).message);
  const cause = (err as { cause?: { code?: string } }).cause?.code;
  if (typeof code === 'string' && (NETWORK.has(code) || NETWORK.has(cause ?? ''))) {
    return new ConnectorError('CONNECTION_FAILED', `${what}: could not connect to Google (${code})`);
  }
  if (code === 'ENOTFOUND')
    return new ConnectorError('HOST_NOT_FOUND', `${what}: a Google host was not found`);
  // gaxios reports its own timeout as an Error whose cause is the AbortError.
  const names = [(err as { name?: string }).name, (err as { cause?: { name?: string } }).cause?.name];
  if (
    names.includes('AbortError') ||
    names.includes('TimeoutError') ||
    code === 'ETIMEDOUT' ||
    cause === 'ETIMEDOUT'
  )
    return new ConnectorError('TIMEOUT', `${what}: timed out`);
  const { status, reason, message } = googleReason(err);
  const safe = detail && message ? `: ${clean(message)}` : '';
  if (reason === 'invalid_grant' || reason === 'invalid_client' || reason === 'unauthorized_client')
    return new ConnectorError(
      'AUTHENTICATION_FAILED',
      `${what}: Google refused the service account (${reason})`,
    );
  if (status === 401 || reason === 'authError' || reason === 'UNAUTHENTICATED')
    return new ConnectorError('AUTHENTICATION_FAILED', `${what}: the access token was rejected (401)`);
  if (
    reason === 'rateLimitExceeded' ||
    reason === 'quotaExceeded' ||
    status === 429 ||
    reason === 'RESOURCE_EXHAUSTED'
  )
    return new ConnectorError(
      'REMOTE_ERROR',
      `${what}: Google quota or rate limit exceeded (${reason ?? status}); retry later`,
    );
  if (reason === 'bytesBilledLimitExceeded')
    return new ConnectorError(
      'QUERY_FAILED',
      `${what}: the query would process more bytes than maximum_bytes_billed allows`,
    );
  if (status === 403 || reason === 'accessDenied' || reason === 'PERMISSION_DENIED' || reason === 'forbidden')
    return new ConnectorError('PERMISSION_DENIED', `${what}: the service account lacks permission${safe}`);
  if (status === 404 || reason === 'notFound' || reason === 'NOT_FOUND')
    return new ConnectorError('QUERY_FAILED', `${what}: not found${safe}`);
  if (status === 400 || reason === 'invalidQuery' || reason === 'invalid' || reason === 'INVALID_ARGUMENT')
    return new ConnectorError('QUERY_FAILED', `${what}: ${reason ?? 'invalid request'}${safe}`);
  if (typeof status === 'number')
    return new ConnectorError(
      'REMOTE_ERROR',
      `${what}: Google answered ${status}${reason ? ` (${reason})` : ''}`,
    );
  return new ConnectorError('REMOTE_ERROR', `${what}: the request failed`);
}

/** A provider message, bounded, with anything shaped like a key or token removed. */
function clean(message: string): string {
  return message
    .replace(/-----BEGIN[\s\S]*?-----END[^-]*-----/g, '[redacted]')
    .replace(/\b(ya29\.|eyJ)[A-Za-z0-9._-]+/g, '[redacted]')
    .slice(0, 300);
}
