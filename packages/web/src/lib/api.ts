import { ApiError, apiErrorOf, createClient, type Middleware, type operations, unwrap } from '@sluice/client';

// The app talks only to its own host: /session and the API mounted under /api (the same
// operations, schemas and answers as the API host), with the session cookie (HttpOnly, never
// visible here) and the session's CSRF token on every state change.

export { ApiError, unwrap };

let csrfToken = '';
export const setCsrfToken = (token: string) => {
  csrfToken = token;
};

// The BFF refuses a state change without the session's CSRF token, and the cookie only travels
// same-origin.
const session: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET') request.headers.set('x-csrf-token', csrfToken);
    return new Request(request, { credentials: 'same-origin' });
  },
};

/** The generated client on the app host's /api mount; a non-2xx answer throws the client's ApiError. */
export const client = createClient({ baseUrl: '/api' });
client.use(session);

/** The app host's own session routes (not part of the API document). */
export async function sessionRequest(method: 'GET' | 'POST' | 'DELETE', body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch('/session', {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw await apiErrorOf(res);
  return res.status === 204 ? undefined : res.json();
}

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Responses<Op extends keyof operations> = operations[Op]['responses'];

/** The success body of an API operation (by its OpenAPI operationId). */
export type Ok<Op extends keyof operations> = Json<
  Responses<Op>[Extract<keyof Responses<Op>, 200 | 201 | 202>]
>;
/** The JSON request body of an API operation. */
export type BodyOf<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
/** The query parameters of an API operation. */
export type QueryOf<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
