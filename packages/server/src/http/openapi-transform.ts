import { createJsonSchemaTransform } from 'fastify-type-provider-zod';
import type { Access } from './access';

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

/**
 * createJsonSchemaTransform plus what the route table knows: each operation gets an
 * operationId (unique; the path parameters break a tie) and its security, `[]` when public.
 */
export function createOpenApiTransform() {
  const base = createJsonSchemaTransform({ skipList: hiddenRoutes });
  const taken = new Map<string, string>();
  return (input: Parameters<typeof base>[0] & { route?: any }) => {
    const out = base(input);
    const schema = out.schema as Record<string, any> | undefined;
    if (!schema || schema.hide) return out;
    const route = input.route ?? {};
    const method = String(Array.isArray(route.method) ? route.method[0] : (route.method ?? 'get'));
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
    const access: Access | undefined = route.config?.access;
    const security = access?.kind === 'public' ? [] : [{ bearer: [] }];
    return { ...out, schema: { ...schema, operationId: id, security } };
  };
}
