import type { FastifyInstance, onSendHookHandler, RouteOptions } from 'fastify';

// Responses that carry a raw token, secret or CSRF token (sign-in and the session read, setup, API
// key create/rotate, personal access token create, a webhook trigger's signing secret, …) must
// never be kept by a browser, proxy or CLI cache: they answer `Cache-Control: no-store`
// (docs/api-conventions.md). Decided from the route's success response schemas when the route is
// registered, at any depth of the schema, so a new route cannot forget it.

/** A field that holds a credential by its name: `token`, `secret`, `csrf_token`, `api_key`, … */
export const SECRET_FIELD = /^(?:token|secret|api_key|personal_access_token|[a-z_]+_(?:token|secret))$/;

type Def = Record<string, unknown>;
const defOf = (schema: unknown): Def | undefined => (schema as { _zod?: { def?: Def } } | null)?._zod?.def;

/** The field names of a zod schema that name a credential, at any depth (objects, arrays, unions, wrappers). */
export function secretFieldsOf(schema: unknown, seen = new Set<unknown>()): string[] {
  const def = defOf(schema);
  if (!def || seen.has(schema)) return [];
  seen.add(schema);
  const found: string[] = [];
  if (def.type === 'object') {
    for (const [key, field] of Object.entries(def.shape as Record<string, unknown>)) {
      if (SECRET_FIELD.test(key)) found.push(key);
      found.push(...secretFieldsOf(field, seen));
    }
    return found;
  }
  // Wrappers (optional, nullable, default, pipe, lazy …), arrays, unions and intersections.
  const children = [
    def.innerType,
    def.element,
    def.in,
    def.out,
    def.left,
    def.right,
    def.valueType,
    ...((def.options as unknown[] | undefined) ?? []),
    typeof def.getter === 'function' ? (def.getter as () => unknown)() : undefined,
  ];
  for (const child of children) if (child) found.push(...secretFieldsOf(child, seen));
  return found;
}

/** Whether a route's answer can carry a credential: any 2xx response schema names one. */
export function carriesSecret(route: Pick<RouteOptions, 'schema'>): boolean {
  const responses = (route.schema?.response ?? {}) as Record<string, unknown>;
  return Object.entries(responses).some(
    ([status, s]) => status.startsWith('2') && secretFieldsOf(s).length > 0,
  );
}

const noStore: onSendHookHandler = async (_req, reply, payload) => {
  reply.header('cache-control', 'no-store');
  return payload;
};

/** On both hosts, before any route is registered. */
export function installNoStore(app: FastifyInstance) {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!carriesSecret(route)) return;
    const existing = route.onSend ? [route.onSend].flat() : [];
    route.onSend = [...existing, noStore];
  });
}
