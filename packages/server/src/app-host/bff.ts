import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { authPorts } from '../app';
import type { Deps, Principal } from '../context';
import { installAuth } from '../http/auth';
import { FORWARD_PREFIX, forward } from '../http/forwarded';
import { requireCsrfToken, requireSameOrigin } from './csrf';
import type { StreamRegistry } from './event-stream';
import { currentSession } from './session.service';
import { sessionCookieName } from './session-cookie';
import { streamRoutes } from './streams.routes';

/**
 * The backend-for-frontend: every API module's routes, with the same schemas and services, under
 * /api on the app host. Only who the caller is changes: the session cookie instead of a bearer
 * token, and every state change must be same-origin and carry the session's CSRF token.
 *
 * The routes are the API host's own: a request under /api that is not one of the app host's
 * event streams is handed to `api` (http/forwarded.ts) once the app host's checks have passed
 * (no bearer token, same origin), before its body is read, and the API host's route answers it
 * with the caller taken from this session. So the modules' routes, schemas and serializers exist
 * once per process. Bodies are parsed by the API host's JSON parser (http/json-body.ts), as on
 * the app host's own routes.
 */
export async function registerBff(
  app: FastifyInstance,
  deps: Deps,
  streams: StreamRegistry,
  api: FastifyInstance,
) {
  const cookieName = sessionCookieName(deps.config);
  await app.register(
    async (bff) => {
      bff.addHook('onRequest', async (req) => requireSameOrigin(req, deps.config));
      const auth = installAuth(bff, deps, authPorts(deps), async (req): Promise<Principal | null> => {
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
      const typed = bff.withTypeProvider<ZodTypeProvider>();
      streamRoutes(typed, deps, streams);
      // Every other path under /api, every method: the API host's routes (and its 404 and 405).
      // Rate limits apply there, after authentication, as for the streams here.
      bff.all(
        '/*',
        {
          config: { rateLimit: false },
          onRequest: async (req, reply) => {
            forward(api, req, reply, {
              id: req.id,
              log: app.log,
              principal: () => auth.principal(req),
              refused: auth.refused,
            });
          },
        },
        async () => {
          // Never reached: the request was handed to the API host in onRequest.
        },
      );
    },
    { prefix: FORWARD_PREFIX },
  );
}
