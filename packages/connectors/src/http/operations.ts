import { type ConnectorContext, ConnectorError, type QueryResult } from '../types';
import type { HttpConfig, HttpCredentials, HttpStatement } from './config';
import { authHeaders, buildRequest, joinUrl } from './request';
import { type InboundResponse, sendHttp } from './transport';

/** Schema import reads the OpenAPI document (openapi.ts); the definition finds it here. */
export { importOpenApi } from './openapi';

// The connection test (a GET of health_path) and saved-query execution of the HTTP kind.

export async function test(
  conn: { config: HttpConfig; credentials: HttpCredentials | null },
  ctx: ConnectorContext,
) {
  const { config } = conn;
  const res = await sendHttp(
    {
      method: 'GET',
      url: joinUrl(config.base_url, config.health_path),
      headers: { accept: '*/*' },
      originHeaders: authHeaders(conn.credentials),
      timeoutMs: config.timeout_seconds * 1000,
    },
    ctx,
  );
  if (res.status >= 200 && res.status < 300) return;
  if (res.status === 405) {
    throw new ConnectorError(
      'HEALTH_PATH_NOT_GET',
      `${config.health_path} answered 405: the health check sends GET; choose a GET-compatible health_path`,
    );
  }
  if (res.status === 401) {
    throw new ConnectorError(
      'AUTHENTICATION_FAILED',
      'the API answered 401: credentials or permissions are wrong',
    );
  }
  if (res.status === 403) {
    throw new ConnectorError(
      'PERMISSION_DENIED',
      'the API answered 403: credentials or permissions are wrong',
    );
  }
  throw new ConnectorError('REMOTE_ERROR', `the health check got HTTP ${res.status} from ${res.url.host}`);
}

// Response headers worth showing; cookies, auth challenges and the like stay out of results.
const SHOWN_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-disposition',
  'cache-control',
  'etag',
  'last-modified',
  'expires',
  'date',
  'location',
  'link',
  'retry-after',
  'x-request-id',
  'x-total-count',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
]);

function shownHeaders(headers: InboundResponse['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || !SHOWN_HEADERS.has(k.toLowerCase())) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

const isTextual = (type: string) =>
  type === '' ||
  type.startsWith('text/') ||
  /[/+](json|xml|csv|yaml|x-www-form-urlencoded|javascript)$/.test(type);

/** The stored result: JSON parsed, text as text, anything else base64; all within maxResultBytes. */
export function resultOf(res: InboundResponse, method: string, ctx: ConnectorContext): QueryResult {
  const contentType = String(res.headers['content-type'] ?? '');
  const type = contentType.split(';')[0].trim().toLowerCase();
  const max = ctx.limits.maxResultBytes;
  let body: unknown = null;
  let encoding: 'json' | 'text' | 'base64' | null = null;
  let truncated = false;
  let rowCount: number | null = null;
  if (method !== 'HEAD' && res.body.length > 0) {
    const isJson = type === 'application/json' || type.endsWith('+json');
    if (isJson && res.body.length <= max) {
      try {
        body = JSON.parse(res.body.toString('utf8'));
        encoding = 'json';
        if (Array.isArray(body)) rowCount = body.length;
      } catch {
        // Not JSON after all: shown as text below.
      }
    }
    if (encoding === null) {
      const textual = isTextual(type);
      const slice = res.body.subarray(0, textual ? max : Math.floor((max * 3) / 4));
      truncated = slice.length < res.body.length;
      body = textual ? slice.toString('utf8') : slice.toString('base64');
      encoding = textual ? 'text' : 'base64';
    }
  }
  return {
    result_type: 'http',
    payload: {
      status: res.status,
      headers: shownHeaders(res.headers),
      content_type: contentType || null,
      body,
      body_encoding: encoding,
      body_bytes: res.body.length,
    },
    row_count: rowCount,
    truncated,
  };
}

export async function execute(
  conn: { config: HttpConfig; credentials: HttpCredentials | null },
  statement: HttpStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const built = buildRequest(conn.config.base_url, statement, parameters);
  const res = await sendHttp(
    {
      ...built,
      headers: { accept: 'application/json, */*;q=0.8', ...built.headers },
      originHeaders: authHeaders(conn.credentials),
      timeoutMs: conn.config.timeout_seconds * 1000,
    },
    ctx,
  );
  return resultOf(res, built.method, ctx);
}
