import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import { apiErrorOf, ConnectionError } from './errors';
import type { components, operations, paths } from './schema';

export { ApiError, apiErrorOf, ConnectionError, type ErrorEnvelope, type ValidationIssue } from './errors';
export type { components, Middleware, operations, paths };

export type ClientOptions = {
  /** The API host, e.g. `http://127.0.0.1:8080` (no `/api` suffix). */
  baseUrl: string;
  /** A personal access token (`slc_pat_…`) or an organization API key (`slc_key_…`). */
  token?: string;
  /** Replaces the global fetch (proxies, custom agents). */
  fetch?: (request: Request) => Promise<Response>;
  headers?: Record<string, string>;
};

export type SluiceClient = Client<paths>;

/**
 * A client typed by the generated OpenAPI paths. Every non-2xx answer is thrown as an
 * `ApiError` and an unreachable server as a `ConnectionError`, so a caller cannot mistake a
 * failure for an empty result; `unwrap` narrows the success type.
 */
export function createClient(opts: ClientOptions): SluiceClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const client = createFetchClient<paths>({
    baseUrl,
    fetch: opts.fetch,
    headers: {
      ...opts.headers,
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
    },
  });
  const errors: Middleware = {
    async onResponse({ response }) {
      if (!response.ok) throw await apiErrorOf(response);
      return undefined;
    },
    onError({ error }) {
      return new ConnectionError(baseUrl, error);
    },
  };
  client.use(errors);
  return client;
}

/** `await unwrap(client.GET(...))` → the response body, typed (undefined for 204). */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const result = await call;
  // The middleware already throws for non-2xx; this guards clients built without it.
  if (!result.response.ok) throw await apiErrorOf(result.response);
  return result.data as T;
}
