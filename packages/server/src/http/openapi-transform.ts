import { createJsonSchemaTransform } from 'fastify-type-provider-zod';
import type { ZodType } from 'zod';
import type { Access } from './access';
import { commonResponses } from './openapi';

// Routes the OpenAPI document leaves out: the document itself and the operations endpoints.
export const hiddenRoutes = ['/openapi.json', '/healthz', '/readyz', '/metrics'];

const words = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean);
const pascal = (s: string) =>
  words(s)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

/** Fastify path (`:param`, `:param(^re)::verb`) → OpenAPI path (`{param}`, `{param}:verb`). */
export function openApiPath(url: string): string {
  return url
    .replace(/:([A-Za-z0-9_]+)(\([^)]*\))?/g, (m, name: string, _re, offset: number, all: string) =>
      // The second colon of `::` is a literal; never a parameter.
      all[offset - 1] === ':' ? m : `{${name}}`,
    )
    .replace(/::/g, ':');
}

/**
 * A stable operationId from method and path: `listEvents`, `getApiKeys`, `rotateApiKeys`.
 * The organization prefix is dropped (almost every route has it); `list` marks a list response.
 */
export function operationIdOf(method: string, url: string, isList: boolean): string {
  const path = openApiPath(url);
  const verb = /\}:([a-z-]+)$/.exec(path)?.[1];
  let segments = path
    .replace(/:[a-z-]+$/, '')
    .split('/')
    .filter(Boolean);
  if (segments[0] === 'organizations' && segments[1] === '{organization}' && segments.length > 2) {
    segments = segments.slice(2);
  }
  const nouns = segments.filter((s) => !s.startsWith('{'));
  const m = method.toLowerCase();
  const action = verb
    ? words(verb)
        .map((w, i) => (i === 0 ? w : pascal(w)))
        .join('')
    : m === 'get'
      ? isList
        ? 'list'
        : 'get'
      : (({ post: 'create', put: 'put', patch: 'update', delete: 'delete' } as Record<string, string>)[m] ??
        m);
  return action + nouns.map(pascal).join('');
}

function isListResponse(schema: unknown): boolean {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return Boolean(shape && 'has_more' in shape);
}

// Marks an operation whose body may be left out; the document transform turns it into
// `requestBody.required: false` (@fastify/swagger marks every body required).
const OPTIONAL_BODY = 'x-sluice-optional-body';

/**
 * createJsonSchemaTransform plus what the route table knows: each operation gets an
 * operationId (unique; the path parameters break a tie), its security (`[]` when public), and
 * the error statuses the plumbing can answer for it (`commonResponses`).
 */
export function createOpenApiTransform() {
  const base = createJsonSchemaTransform({ skipList: hiddenRoutes });
  const taken = new Map<string, string>();
  return (input: Parameters<typeof base>[0] & { route?: any }) => {
    const route = input.route ?? {};
    const method = String(Array.isArray(route.method) ? route.method[0] : (route.method ?? 'get'));
    const access: Access | undefined = route.config?.access;
    const declared = input.schema as Record<string, any> | undefined;
    const withCommon =
      declared && !declared.hide
        ? {
            ...declared,
            response: { ...commonResponses({ method, url: input.url, access }), ...declared.response },
          }
        : declared;
    const out = base({ ...input, schema: withCommon as typeof input.schema });
    const schema = out.schema as Record<string, any> | undefined;
    if (!schema || schema.hide) return out;
    const key = `${method} ${input.url}`;
    let id = schema.operationId ?? taken.get(key);
    if (!id) {
      id = operationIdOf(
        method,
        input.url,
        isListResponse((input.schema?.response as Record<number, unknown> | undefined)?.[200]),
      );
      const params = [...openApiPath(input.url).matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      if ([...taken.values()].includes(id)) id += `By${params.map(pascal).join('And')}`;
      taken.set(key, id);
    }
    const security = access?.kind === 'public' ? [] : [{ bearer: [] }];
    // A body schema that accepts "no body" (an empty request is no body: docs/api-conventions.md).
    const body = declared?.body as ZodType | undefined;
    const optionalBody = body ? body.safeParse(undefined).success : false;
    return {
      ...out,
      schema: { ...schema, operationId: id, security, ...(optionalBody ? { [OPTIONAL_BODY]: true } : {}) },
    };
  };
}

const header = (description: string, schema: Record<string, unknown>) => ({ description, schema });

/** Response headers the plumbing may set on any answer (components.headers). */
export const responseHeaders = {
  'X-Request-Id': header('Correlation id of the request; repeated as `error.request_id`.', {
    type: 'string',
  }),
  'RateLimit-Limit': header('Requests allowed in the current window (rate limit).', { type: 'string' }),
  'RateLimit-Remaining': header('Requests left in the current window.', { type: 'string' }),
  'RateLimit-Reset': header('Seconds until the current window ends.', { type: 'string' }),
  'Retry-After': header('Seconds to wait before retrying (with 429).', { type: 'string' }),
  'Cache-Control': header('`no-store` on answers of operations that can carry a token or secret.', {
    type: 'string',
  }),
} as const;

/**
 * The whole-document pass after every operation is built: optional bodies lose `required`, and
 * every response names the headers the plumbing may add (by reference, to keep it small).
 */
export function transformOpenApiDocument({ openapiObject }: { openapiObject: Record<string, any> }) {
  const doc = openapiObject;
  doc.components = { ...doc.components, headers: { ...doc.components?.headers, ...responseHeaders } };
  for (const item of Object.values<Record<string, any>>(doc.paths ?? {})) {
    for (const op of Object.values<Record<string, any>>(item)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      if (op[OPTIONAL_BODY]) {
        delete op[OPTIONAL_BODY];
        if (op.requestBody) op.requestBody.required = false;
      }
      for (const [status, response] of Object.entries<Record<string, any>>(op.responses)) {
        const names = Object.keys(responseHeaders).filter((h) => h !== 'Retry-After' || status === '429');
        response.headers = {
          ...Object.fromEntries(names.map((h) => [h, { $ref: `#/components/headers/${h}` }])),
          ...response.headers,
        };
      }
    }
  }
  return doc;
}
