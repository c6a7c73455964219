import { randomBytes } from 'node:crypto';
import { ConnectorError } from '../types';
import type { HttpCredentials, HttpStatement } from './config';

// Turning config, credentials and a statement with its parameters into one outbound request.
// Parameters are substituted into values (URL-encoded in the path, JSON values in JSON
// bodies), never concatenated into JSON text.

/** `base_url` + a relative path, keeping base_url's own path (`/v1` + `/orders` = `/v1/orders`). */
export function joinUrl(baseUrl: string, path: string, query?: URLSearchParams): URL {
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const rel = path.startsWith('/') ? path : `/${path}`;
  const [relPath, relQuery] = splitOnce(rel, '?');
  const url = new URL(`${base.origin}${basePath}${relPath}`);
  const params = new URLSearchParams(base.search);
  for (const [k, v] of new URLSearchParams(relQuery ?? '')) params.append(k, v);
  for (const [k, v] of query ?? []) params.append(k, v);
  url.search = params.toString();
  if (url.origin !== base.origin) throw new ConnectorError('INVALID_STATEMENT', 'the path leaves base_url');
  return url;
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}

/** The Authorization header of the connection's credentials, if any. */
export function authHeaders(credentials: HttpCredentials | null): Record<string, string> {
  if (!credentials) return {};
  if (credentials.bearer_token) return { authorization: `Bearer ${credentials.bearer_token}` };
  if (credentials.username !== undefined) {
    const pair = `${credentials.username}:${credentials.password ?? ''}`;
    return { authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
  }
  return {};
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/;

function param(parameters: Record<string, unknown>, name: string): unknown {
  if (!Object.hasOwn(parameters, name)) {
    throw new ConnectorError('INVALID_STATEMENT', `parameter ${name} is used by the statement but not given`);
  }
  return parameters[name];
}

const asText = (v: unknown) =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** Placeholders inside a string, each value turned into text by `encode`. */
export function substituteText(
  text: string,
  parameters: Record<string, unknown>,
  encode: (s: string) => string = (s) => s,
): string {
  return text.replace(PLACEHOLDER, (_m, name: string) => encode(asText(param(parameters, name))));
}

/** A JSON value with placeholders: a string that is exactly `{{name}}` becomes the parameter's value. */
export function substituteValue(value: unknown, parameters: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return param(parameters, whole[1]);
    return substituteText(value, parameters);
  }
  if (Array.isArray(value)) return value.map((v) => substituteValue(v, parameters));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteValue(v, parameters)]));
  }
  return value;
}

export type BuiltRequest = {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | Buffer;
};

const isScalar = (v: unknown) => ['string', 'number', 'boolean'].includes(typeof v);

export function buildRequest(
  baseUrl: string,
  statement: HttpStatement,
  parameters: Record<string, unknown>,
): BuiltRequest {
  const path = substituteText(statement.path, parameters, encodeURIComponent);
  const query = new URLSearchParams();
  for (const [key, raw] of Object.entries(statement.query_params ?? {})) {
    const value = substituteValue(raw, parameters);
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v === null || v === undefined) continue;
      query.append(key, asText(v));
    }
  }
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(statement.headers ?? {})) {
    const value = substituteText(raw, parameters);
    // A value with a line break would smuggle another header into the request.
    if (/[\r\n\0]/.test(value)) {
      throw new ConnectorError('INVALID_STATEMENT', `header ${name} must not contain line breaks`);
    }
    headers[name.toLowerCase()] = value;
  }
  const built: BuiltRequest = { method: statement.method, url: joinUrl(baseUrl, path, query), headers };
  if (statement.body === undefined) return built;
  if (statement.method === 'GET' || statement.method === 'HEAD') {
    throw new ConnectorError('INVALID_STATEMENT', `${statement.method} requests carry no body`);
  }
  built.body = encodeBody(substituteValue(statement.body, parameters), headers);
  return built;
}

/** The media type of a Content-Type value, lowercased, without parameters. */
export const mediaType = (contentType: string | undefined) =>
  (contentType ?? '').split(';')[0].trim().toLowerCase();

/**
 * A JSON value as the request body its Content-Type asks for (JSON when none is set; forms
 * from an object of scalars); sets the Content-Type it implies in `headers`.
 */
export function encodeBody(body: unknown, headers: Record<string, string>): string | Buffer {
  const type = mediaType(headers['content-type']);
  if (type === 'application/x-www-form-urlencoded') {
    return new URLSearchParams(formFields(body, 'URL-encoded')).toString();
  }
  if (type === 'multipart/form-data') {
    const boundary = newBoundary();
    headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
    return multipart(formFields(body, 'multipart'), boundary);
  }
  if (type === '' || type === 'application/json' || type.endsWith('+json')) {
    headers['content-type'] ||= 'application/json';
    return JSON.stringify(body);
  }
  if (typeof body === 'string') return body;
  throw new ConnectorError(
    'INVALID_STATEMENT',
    `a ${type} body must be a string (JSON values are sent as application/json)`,
  );
}

/** A multipart boundary no field value can contain by chance. */
export const newBoundary = () => `sluice-${randomBytes(16).toString('hex')}`;

/** A multipart name or filename inside quotes: quotes, line breaks and backslashes escaped. */
export const quoteFormName = (s: string) => s.replace(/["\r\n\\]/g, (c) => encodeURIComponent(c));

/** Form bodies are flat: each field a scalar, or an array of scalars (the key repeats). */
function formFields(body: unknown, kind: string): [string, string][] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `a ${kind} form body must be an object of scalar fields (null is allowed for JSON bodies only)`,
    );
  }
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(body)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item === null || item === undefined) continue;
      if (!isScalar(item)) {
        throw new ConnectorError('INVALID_STATEMENT', `form field ${k} must be a string, number or boolean`);
      }
      out.push([k, String(item)]);
    }
  }
  return out;
}

function multipart(fields: [string, string][], boundary: string): Buffer {
  const parts = fields.map(
    ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${quoteFormName(k)}"\r\n\r\n${v}\r\n`,
  );
  return Buffer.from(`${parts.join('')}--${boundary}--\r\n`);
}
