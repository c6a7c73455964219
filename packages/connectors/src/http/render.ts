import type { Operation, StepContext } from '@sluice/engine';
import { type ConnectorContext, ConnectorError } from '../types';
import { type HttpConfig, type HttpCredentials, RESERVED_HEADERS } from './config';
import { authHeaders, joinUrl } from './request';
import type { OutboundRequest } from './transport';

// A pipeline step's HTTP operation as one outbound request. Templates are rendered here, at
// the moment of the call (secrets included), and what they render is never logged: the path
// gets URL-encoded values, query values and headers their text.

export type HttpOperation = Extract<Operation, { operation_type: 'http' }>;
export type HttpConn = { config: HttpConfig; credentials: HttpCredentials | null };

const TEMPLATE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g;
const INPUT = /^\{\{\s*input\s*\}\}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

const asText = (v: unknown) =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

export function httpOperationOf(step: StepContext): HttpOperation {
  const op = step.step.operation;
  if (op.operation_type !== 'http') {
    throw invalid(`an HTTP data source runs http operations, not ${op.operation_type}`);
  }
  return op;
}

/** `body: "{{input}}"`: the upstream payload is the body. */
export const forwardsInput = (op: HttpOperation) => typeof op.body === 'string' && INPUT.test(op.body);

/** The value of one template, as the run's scope has it right now. */
const value = (step: StepContext, name: string) => step.render(`{{${name}}}`);

function renderPath(path: string, step: StepContext): string {
  const literal = path.replace(TEMPLATE, '');
  if (/^[a-z][a-z0-9+.-]*:/i.test(literal) || literal.startsWith('//') || /[\s#]/.test(literal)) {
    throw invalid('path must be a path below base_url, without spaces or a fragment');
  }
  return path.replace(TEMPLATE, (_m, name: string) => encodeURIComponent(asText(value(step, name))));
}

/** Method, URL and headers of the operation, rendered; the body is the caller's business. */
export function renderHttp(conn: HttpConn, op: HttpOperation, step: StepContext): OutboundRequest {
  const query = new URLSearchParams();
  for (const [key, raw] of Object.entries(op.query_params ?? {})) {
    const v = step.render(raw);
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item === null || item === undefined) continue;
      query.append(key, asText(item));
    }
  }
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(op.headers ?? {})) {
    if (!HEADER_NAME.test(name)) throw invalid(`${JSON.stringify(name.slice(0, 100))} is not a header name`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw invalid(`header ${name} is set by the connection (credentials belong in the data source)`);
    }
    const text = asText(step.render(raw));
    // A line break would smuggle another header into the request.
    if (/[\r\n\0]/.test(text)) throw invalid(`header ${name} must not contain line breaks`);
    headers[name.toLowerCase()] = text;
  }
  return {
    method: op.method,
    url: joinUrl(conn.config.base_url, renderPath(op.path, step), query),
    headers,
    originHeaders: authHeaders(conn.credentials),
    timeoutMs: conn.config.timeout_seconds * 1000,
  };
}

/** The step's signal and the caller's, as one. */
export function signalOf(step: StepContext, ctx: ConnectorContext): AbortSignal {
  return ctx.signal ? AbortSignal.any([step.signal, ctx.signal]) : step.signal;
}

/** A non-2xx answer: status and media type only, never the body (it may echo what we sent). */
export function remoteError(res: { status: number; headers: Record<string, unknown>; url: URL }) {
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  return new ConnectorError(
    'REMOTE_ERROR',
    `${res.url.host} answered HTTP ${res.status}${type ? ` (${type.slice(0, 100)})` : ''}`,
  );
}
