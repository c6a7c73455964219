import { EgressBlockedError, guardedDispatcher } from '../egress';
import { type ConnectorContext, ConnectorError } from '../types';

// The one fetch both vendor SDKs are given (Octokit's `request.fetch`, Gitbeaker's requester):
// every connection goes through the egress guard; the OAuth access token is added here and
// nowhere else; a 401 asks the server for a refreshed token once and replays the request; a
// short rate-limit wait (Retry-After / x-ratelimit-reset) is waited out once.

export type ForgeAuth = {
  token: string;
  refreshed: boolean;
  /** Why the refresh failed (a ConnectorError with its own message); reported instead of the 401. */
  error: unknown;
  /** The answer timeout this connection's requests run with (set by forgeFetch). */
  timeoutMs?: number;
};

/** Waits longer than this are reported as RATE_LIMITED rather than slept through. */
const MAX_RATE_LIMIT_WAIT_S = 5;

/** The HTTP client `forgeFetch` loads on its first request (a worker's warm start loads it ahead). */
export const forgeFetchModule = () => import('undici');

/** How long one request waits for the answer's headers, and between body chunks. */
export const FORGE_TIMEOUT_MS = 30_000;

export function newAuth(credentials: Record<string, unknown> | null): ForgeAuth {
  const token = typeof credentials?.access_token === 'string' ? credentials.access_token : '';
  return { token, refreshed: false, error: null };
}

type HeaderView = { get(name: string): string | null };

export function rateLimitWait(status: number, headers: HeaderView): number | null {
  const retryAfter = headers.get('retry-after');
  const remaining = headers.get('x-ratelimit-remaining') ?? headers.get('ratelimit-remaining');
  const limited = status === 429 || (status === 403 && (remaining === '0' || retryAfter !== null));
  if (!limited) return null;
  if (retryAfter && /^\d+$/.test(retryAfter)) return Number(retryAfter);
  const reset = headers.get('x-ratelimit-reset') ?? headers.get('ratelimit-reset');
  if (reset && /^\d+$/.test(reset)) return Math.max(0, Number(reset) - Math.floor(Date.now() / 1000));
  return 60;
}

export function forgeFetch(ctx: ConnectorContext, auth: ForgeAuth): typeof fetch {
  auth.timeoutMs = ctx.limits.answerTimeoutMs ?? FORGE_TIMEOUT_MS;
  const dispatcher = guardedDispatcher(ctx.policy, { answerTimeoutMs: auth.timeoutMs });
  const send = async (url: string | URL | Request, init: RequestInit | undefined) => {
    const { fetch: undiciFetch } = await forgeFetchModule();
    const headers = new Headers(init?.headers as ConstructorParameters<typeof Headers>[0]);
    headers.delete('private-token');
    if (auth.token) headers.set('authorization', `Bearer ${auth.token}`);
    else headers.delete('authorization');
    try {
      return (await undiciFetch(
        url as string,
        {
          ...(init as object),
          headers,
          dispatcher,
          signal: init?.signal ?? ctx.signal,
        } as never,
      )) as unknown as Response;
    } catch (err) {
      const blocked = findCause(err, EgressBlockedError);
      if (blocked) auth.error = blocked;
      throw err;
    }
  };
  return (async (url: string | URL | Request, init?: RequestInit) => {
    let res = await send(url, init);
    if (res.status === 401 && !auth.refreshed && ctx.refreshCredentials) {
      auth.refreshed = true;
      try {
        const next = await ctx.refreshCredentials();
        if (typeof next?.access_token === 'string' && next.access_token !== auth.token) {
          auth.token = next.access_token;
          await res.body?.cancel();
          res = await send(url, init);
        }
      } catch (err) {
        auth.error = err;
      }
    }
    const wait = rateLimitWait(res.status, res.headers);
    if (wait !== null && wait <= MAX_RATE_LIMIT_WAIT_S) {
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, wait * 1000));
      res = await send(url, init);
    }
    return res;
  }) as typeof fetch;
}

/** The network failure under an SDK error (Octokit reports a failed fetch as status 500). */
function networkFailure(label: string, err: unknown, timeoutMs: number): ConnectorError | null {
  let e: unknown = err;
  for (let i = 0; i < 6 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      return new ConnectorError('HOST_NOT_FOUND', `the ${label} host was not found`);
    if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
      return new ConnectorError('CONNECTION_FAILED', `could not connect to ${label} (${code})`);
    if (
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT' ||
      code === 'UND_ERR_CONNECT_TIMEOUT' ||
      code === 'ETIMEDOUT'
    )
      return new ConnectorError('TIMEOUT', `${label} did not answer within ${timeoutMs / 1000} s`);
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function findCause<T>(err: unknown, type: new (...a: any[]) => T): T | null {
  let e: unknown = err;
  for (let i = 0; i < 6 && e; i++) {
    if (e instanceof type) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * A vendor SDK error as our sanitized error: status and our own words only, never the
 * provider's message or the request URL (which the SDKs put into theirs).
 */
export function forgeError(label: string, err: unknown, auth: ForgeAuth, what: string): Error {
  if (auth.error instanceof ConnectorError) return auth.error;
  if (err instanceof ConnectorError) return err;
  const blocked = auth.error instanceof EgressBlockedError ? auth.error : findCause(err, EgressBlockedError);
  if (blocked) return new ConnectorError('PRIVATE_HOST_BLOCKED', blocked.message);
  const network = networkFailure(label, err, auth.timeoutMs ?? FORGE_TIMEOUT_MS);
  if (network) return network;
  const status = statusOf(err);
  const headers = headersOf(err);
  if (status === 401) {
    return new ConnectorError(
      'AUTHENTICATION_FAILED',
      auth.token
        ? `${label} rejected the access token (HTTP 401); authorize the data source again`
        : `the data source is not authorized with ${label}; authorize it (POST …/oauth:authorize)`,
    );
  }
  const wait = status ? rateLimitWait(status, headers) : null;
  if (wait !== null) {
    return new ConnectorError(
      'RATE_LIMITED',
      `${label} rate limit reached (HTTP ${status}); retry after ${wait} seconds`,
    );
  }
  if (status === 403) {
    return new ConnectorError(
      'PERMISSION_DENIED',
      `the connected ${label} account lacks permission to ${what} (HTTP 403)`,
    );
  }
  if (status === 404) return new ConnectorError('NOT_FOUND', `${label} found nothing to ${what} (HTTP 404)`);
  if (status === 409 || status === 422 || status === 400) {
    return new ConnectorError('QUERY_FAILED', `${label} refused to ${what} (HTTP ${status})`);
  }
  if (status && status >= 500)
    return new ConnectorError('REMOTE_ERROR', `${label} failed to ${what} (HTTP ${status})`);
  if ((err as { name?: string })?.name === 'AbortError')
    return new ConnectorError('TIMEOUT', `${label} did not answer in time`);
  return new ConnectorError('CONNECTION_FAILED', `could not reach ${label} to ${what}`);
}

function statusOf(err: unknown): number | null {
  const e = err as { status?: unknown; cause?: { response?: { status?: unknown } } };
  if (typeof e?.status === 'number' && e.status > 0) return e.status;
  const s = e?.cause?.response?.status;
  return typeof s === 'number' ? s : null;
}

function headersOf(err: unknown): HeaderView {
  const e = err as { response?: { headers?: unknown }; cause?: { response?: { headers?: unknown } } };
  const h = e?.response?.headers ?? e?.cause?.response?.headers;
  // undici's Headers and the global one are different classes; both have get().
  if (h && typeof (h as HeaderView).get === 'function') return h as HeaderView;
  const out = new Headers();
  if (h && typeof h === 'object')
    for (const [k, v] of Object.entries(h)) if (typeof v === 'string') out.set(k, v);
  return out;
}
