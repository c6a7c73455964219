import type { FastifyInstance, onSendHookHandler, RouteOptions } from 'fastify';
import { z } from 'zod';

// Responses that carry a raw token or secret (API key create/rotate, personal access token
// create, and any later route whose response schema names such a field) must never be kept by a
// browser, proxy or CLI cache: they answer `Cache-Control: no-store`. Decided from the route's
// response schemas when the route is registered, so a new route cannot forget it.

const SECRET_FIELDS = new Set(['token', 'secret', 'client_secret']);

function carriesSecret(schema: unknown): boolean {
  if (!(schema instanceof z.ZodObject)) return false;
  return Object.keys(schema.shape).some((k) => SECRET_FIELDS.has(k));
}

const noStore: onSendHookHandler = async (_req, reply, payload) => {
  reply.header('cache-control', 'no-store');
  return payload;
};

export function installNoStore(app: FastifyInstance) {
  app.addHook('onRoute', (route: RouteOptions) => {
    const responses = (route.schema?.response ?? {}) as Record<string, unknown>;
    const secret = Object.entries(responses).some(
      ([status, s]) => status.startsWith('2') && carriesSecret(s),
    );
    if (!secret) return;
    const existing = route.onSend ? [route.onSend].flat() : [];
    route.onSend = [...existing, noStore];
  });
}
