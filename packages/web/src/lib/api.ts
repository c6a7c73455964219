// The app talks only to its own host: /session and the API mounted under /api, with the session
// cookie (HttpOnly, never visible here) and the CSRF token on every state change.

export type ValidationIssue = { path: string; code: string; message: string };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly validation: ValidationIssue[] = [],
  ) {
    super(message);
  }
}

let csrfToken = '';
export const setCsrfToken = (token: string) => {
  csrfToken = token;
};

export type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {}))
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

export async function request<T>(method: string, url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const e = json?.error ?? {};
    throw new ApiError(
      res.status,
      e.code ?? 'HTTP_ERROR',
      e.message ?? res.statusText,
      e.validation_errors ?? [],
    );
  }
  return json as T;
}

/** The API under /api: same paths, schemas and answers as the API host. */
export const api = {
  get: <T>(path: string, query?: Query) => request<T>('GET', withQuery(`/api${path}`, query)),
  post: <T>(path: string, body?: unknown, query?: Query) =>
    request<T>('POST', withQuery(`/api${path}`, query), body),
  put: <T>(path: string, body?: unknown, query?: Query) =>
    request<T>('PUT', withQuery(`/api${path}`, query), body),
  patch: <T>(path: string, body?: unknown) => request<T>('PATCH', `/api${path}`, body),
  del: <T>(path: string, query?: Query) => request<T>('DELETE', withQuery(`/api${path}`, query)),
};

export type Page<K extends string, T> = { [key in K]: T[] } & {
  has_more: boolean;
  next_cursor: string | null;
  prev_cursor: string | null;
};
