import type { FastifyRequest } from 'fastify';
import type { TypedApp } from '../app';
import type { Deps } from '../context';
import { iso } from '../http/fields';
import { errorResponses, noContent } from '../http/openapi';
import { publicRateLimit } from '../http/rate-limit';
import { createPatBody, patWithTokenSchema } from '../modules/identity/pats.schemas';
import { createPat } from '../modules/identity/pats.service';
import { toUser } from '../modules/identity/users.service';
import { sessionSchema, signInBody } from './session.schemas';
import { currentSession, notSignedIn, signIn, signOut } from './session.service';
import { SESSION_COOKIE, SESSION_TTL_SECONDS, sessionCookieOptions } from './session-cookie';

/** Sign-in, sign-out and who-am-I for the browser, plus minting the first personal access token. */
export function sessionRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const cookieOptions = sessionCookieOptions(deps.config);

  const signedIn = async (req: FastifyRequest) => {
    const found = await currentSession(ctx(req), req.cookies[SESSION_COOKIE]);
    if (!found) throw notSignedIn();
    return found;
  };

  app.post('/session', {
    config: publicRateLimit(deps.config),
    schema: { body: signInBody, response: { 201: sessionSchema, ...errorResponses } },
    handler: async (req, reply) => {
      const { secret, session } = await signIn(ctx(req), req.body);
      reply.setCookie(SESSION_COOKIE, secret, { ...cookieOptions, maxAge: SESSION_TTL_SECONDS });
      return reply.status(201).send(session);
    },
  });

  app.get('/session', {
    schema: { response: { 200: sessionSchema, ...errorResponses } },
    handler: async (req) => {
      const { user, session } = await signedIn(req);
      return { user: toUser(user), expires_at: iso(session.expiresAt) };
    },
  });

  app.delete('/session', {
    schema: { response: { ...noContent, ...errorResponses } },
    handler: async (req, reply) => {
      await signOut(ctx(req), req.cookies[SESSION_COOKIE]);
      return reply.clearCookie(SESSION_COOKIE, cookieOptions).status(204).send(null);
    },
  });

  app.post('/session/personal-access-tokens', {
    schema: { body: createPatBody, response: { 201: patWithTokenSchema, ...errorResponses } },
    handler: async (req, reply) => {
      const { user } = await signedIn(req);
      const pat = await createPat(ctx(req), { userId: user.id, userSlug: user.slug }, req.body);
      return reply.status(201).send(pat);
    },
  });
}
