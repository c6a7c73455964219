import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { authPorts } from '../app';
import type { Deps, Principal } from '../context';
import { installAuth } from '../http/auth';
import { modules } from '../modules/registry';
import { requireCsrfToken, requireSameOrigin } from './csrf';
import type { StreamRegistry } from './event-stream';
import { currentSession } from './session.service';
import { sessionCookieName } from './session-cookie';
import { streamRoutes } from './streams.routes';

/**
 * The backend-for-frontend: every API module's routes, with the same schemas and services, mounted
 * under /api on the app host. Only who the caller is changes: the session cookie instead of a
 * bearer token, and every state change must be same-origin and carry the session's CSRF token.
 * Bodies are parsed by the app host's JSON parser, the API host's (http/json-body.ts).
 */
export async function registerBff(app: FastifyInstance, deps: Deps, streams: StreamRegistry) {
  const cookieName = sessionCookieName(deps.config);
  await app.register(
    async (api) => {
      api.addHook('onRequest', async (req) => requireSameOrigin(req, deps.config));
      installAuth(api, deps, authPorts(deps), async (req): Promise<Principal | null> => {
        const found = await currentSession({ deps, requestId: req.id }, req.cookies[cookieName]);
        if (!found) return null;
        requireCsrfToken(req, found.secret);
        const { user, session } = found;
        return {
          type: 'user',
          userId: user.id,
          userSlug: user.slug,
          email: user.email,
          emailVerified: user.emailVerifiedAt !== null,
          tokenId: session.id,
        };
      });
      const typed = api.withTypeProvider<ZodTypeProvider>();
      for (const register of modules) await register(typed, deps);
      streamRoutes(typed, deps, streams);
    },
    { prefix: '/api' },
  );
}
