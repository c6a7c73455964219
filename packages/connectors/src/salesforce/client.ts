import type { PassThrough } from 'node:stream';
import { EgressBlockedError, guardedDispatcher, undici } from '../egress';
import { networkError, scrub } from '../relational/errors';
import { type ConnectorContext, ConnectorError } from '../types';
import type { SalesforceConfig, SalesforceCredentials } from './config';

// A Salesforce session through jsforce (loaded on first use): the OAuth 2.0 client-credentials
// flow against the instance's own token endpoint, then REST calls with the bearer token. jsforce
// sends every request through a transport of ours, built on the egress-guarded undici
// dispatcher, so each connection (the token endpoint, every nextRecordsUrl) is checked and goes
// to the very address that was checked. The transport does not retry: a rate limit is reported.

export type SalesforceConnection = { config: SalesforceConfig; credentials: SalesforceCredentials | null };

type JsforceModules = { jsforce: any; Transport: any; helper: any };
let modules: Promise<JsforceModules> | undefined;

function loadJsforce(): Promise<JsforceModules> {
  modules ??= Promise.all([
    import('jsforce'),
    // jsforce's own transport and stream helpers (typed by jsforce's .d.ts files)
    import('jsforce/lib/transport.js'),
    import('jsforce/lib/request-helper.js'),
  ]).then(([j, t, h]) => ({
    jsforce: (j as any).default ?? j,
    Transport: (t as any).Transport ?? (t as any).default?.Transport,
    helper: (h as any).default ?? h,
  }));
  return modules;
}

/** Error codes of Salesforce REST bodies ([{message, errorCode}]) we map to our codes. */
const PERMISSION = new Set([
  'INSUFFICIENT_ACCESS',
  'INSUFFICIENT_ACCESS_OR_READONLY',
  'INSUFFICIENT_ACCESS_ON_CROSS_REFERENCE_ENTITY',
  'API_DISABLED_FOR_ORG',
  'API_CURRENTLY_DISABLED',
  'FUNCTIONALITY_NOT_ENABLED',
]);
const QUERY = new Set([
  'MALFORMED_QUERY',
  'INVALID_FIELD',
  'INVALID_TYPE',
  'INVALID_QUERY_FILTER_OPERATOR',
  'INVALID_QUERY_LOCATOR',
]);
const OAUTH_AUTH = new Set([
  'invalid_client',
  'invalid_client_id',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
]);

export function salesforceError(
  err: any,
  conn: SalesforceConnection,
  values: readonly unknown[] = [],
): ConnectorError {
  if (err instanceof ConnectorError) return err;
  for (let e = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (e instanceof EgressBlockedError) return new ConnectorError('PRIVATE_HOST_BLOCKED', e.message);
  }
  const where = new URL(conn.config.instance_url).host;
  for (let e = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT')
      return new ConnectorError('TIMEOUT', `${where} did not answer in time`);
  }
  const net = networkError(err?.cause ?? err, where, 30);
  if (net && !(net === err)) return net;
  const code = String(err?.errorCode ?? err?.name ?? '');
  const secrets = [conn.credentials?.client_secret, ...values];
  if (OAUTH_AUTH.has(code))
    return new ConnectorError(
      'AUTHENTICATION_FAILED',
      `Salesforce rejected the connected app's client credentials (${code})`,
    );
  if (code === 'INVALID_SESSION_ID')
    return new ConnectorError(
      'AUTHENTICATION_FAILED',
      'Salesforce rejected the access token: it has expired or was revoked (INVALID_SESSION_ID)',
    );
  if (PERMISSION.has(code))
    return new ConnectorError(
      'PERMISSION_DENIED',
      `the connected app's user lacks access for this request (${code})`,
    );
  if (code === 'REQUEST_LIMIT_EXCEEDED')
    return new ConnectorError(
      'RATE_LIMITED',
      'the organization exceeded its Salesforce API request limit (REQUEST_LIMIT_EXCEEDED); try again later',
    );
  if (code === 'ERROR_HTTP_429')
    return new ConnectorError(
      'RATE_LIMITED',
      'Salesforce is rate-limiting requests (HTTP 429); try again later',
    );
  if (QUERY.has(code))
    return new ConnectorError(
      'QUERY_FAILED',
      `${code}: ${scrub(String(err?.message ?? ''), secrets).slice(0, 500)}`,
    );
  if (/^ERROR_HTTP_(\d+)$/.test(code))
    return new ConnectorError('REMOTE_ERROR', `Salesforce answered HTTP ${code.slice(11)}`);
  if (code && /^[A-Z_]+$/.test(code))
    return new ConnectorError('REMOTE_ERROR', `Salesforce refused the request (${code})`);
  return new ConnectorError('CONNECTION_FAILED', `the request to ${where} failed`);
}

export type SalesforceSession = {
  /** A REST call (path below the instance or a URL on the instance's origin); JSON answer. */
  call<T = any>(req: { method?: string; url: string; body?: unknown }): Promise<T>;
  /** The API base path, `/services/data/vNN.N`. */
  base: string;
  close(): Promise<void>;
};

/** Signs in with the client-credentials flow; the caller closes the session. */
export async function openSalesforce(
  conn: SalesforceConnection,
  ctx: ConnectorContext,
  opts: { answerTimeoutMs?: number } = {},
): Promise<SalesforceSession> {
  // Long by default: a bulk query may take a while to answer its first page.
  const answerTimeoutMs = opts.answerTimeoutMs ?? 120_000;
  const credentials = conn.credentials;
  if (!credentials) throw new ConnectorError('AUTHENTICATION_FAILED', 'the data source has no credentials');
  const instance = new URL(conn.config.instance_url);
  if (instance.protocol === 'http:' && conn.config.allow_private_hosts !== true)
    throw new ConnectorError('PRIVATE_HOST_BLOCKED', 'plain http instance_url needs allow_private_hosts');
  const origin = instance.origin;
  const { jsforce, Transport, helper } = await loadJsforce();
  const dispatcher = guardedDispatcher(ctx.policy, { connectTimeoutMs: 10_000 });
  const limit = ctx.limits.maxResponseBytes;

  class GuardedTransport extends Transport {
    getRequestStreamCreator() {
      return (
        req: { method: string; url: string; headers?: Record<string, string>; body?: string },
        options: unknown,
      ) => {
        const { output, stream } = helper.createHttpRequestHandlerStreams(req, options);
        (async () => {
          const target = new URL(req.url);
          // Only the configured instance: a URL the remote names elsewhere is refused.
          if (target.origin !== origin)
            throw new ConnectorError(
              'REMOTE_ERROR',
              `Salesforce named a URL on another host (${target.host}); it was not followed`,
            );
          const res = await undici().request(target, {
            method: req.method as any,
            headers: req.headers,
            body: req.body,
            dispatcher,
            signal: ctx.signal,
            headersTimeout: answerTimeoutMs,
            bodyTimeout: answerTimeoutMs,
          });
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = String(v);
          stream.emit('response', { statusCode: res.statusCode, headers });
          let size = 0;
          for await (const chunk of res.body) {
            size += chunk.length;
            if (size > limit) {
              res.body.destroy();
              throw new ConnectorError('RESPONSE_TOO_LARGE', `a Salesforce response exceeded ${limit} bytes`);
            }
            (output as PassThrough).write(chunk);
          }
          (output as PassThrough).end();
        })().catch((err) => stream.emit('error', err));
        return stream;
      };
    }
  }
  const transport = new GuardedTransport();
  const oauth2 = new jsforce.OAuth2({
    loginUrl: origin,
    clientId: credentials.client_id,
    clientSecret: credentials.client_secret,
  });
  oauth2._transport = transport;
  const signIn = async () => {
    const token = await oauth2.requestToken({ grant_type: 'client_credentials' });
    if (typeof token?.access_token !== 'string')
      throw new ConnectorError('AUTHENTICATION_FAILED', 'the token endpoint answered no access token');
    // The instance_url of the answer is not followed: calls stay on the configured instance.
    return token.access_token as string;
  };
  const fail = (err: unknown) => {
    dispatcher.close().catch(() => {});
    return salesforceError(err, conn);
  };
  let accessToken: string;
  try {
    accessToken = await signIn();
  } catch (err) {
    throw fail(err);
  }
  const jconn = new jsforce.Connection({
    instanceUrl: origin,
    accessToken,
    version: conn.config.api_version,
  });
  jconn._transport = transport;
  const base = `/services/data/v${conn.config.api_version}`;

  const once = (req: { method?: string; url: string; body?: unknown }) =>
    jconn.request({
      method: req.method ?? 'GET',
      url: req.url,
      ...(req.body !== undefined
        ? { body: JSON.stringify(req.body), headers: { 'content-type': 'application/json' } }
        : {}),
    });
  return {
    base,
    async call(req) {
      try {
        return await once(req);
      } catch (err: any) {
        // An expired token: one fresh token from the client-credentials flow, one retry.
        if (err?.errorCode !== 'INVALID_SESSION_ID' && err?.name !== 'INVALID_SESSION_ID') throw err;
        jconn.accessToken = await signIn();
        return await once(req);
      }
    },
    close: async () => {
      await dispatcher.close().catch(() => {});
    },
  };
}
