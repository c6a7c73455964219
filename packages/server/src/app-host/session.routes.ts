import type { FastifyRequest } from 'fastify';
import type { Deps } from '../context';
import { iso } from '../http/fields';
import { errorResponses, noContent } from '../http/openapi';
import { publicRateLimit } from '../http/rate-limit';
import type { TypedApp } from '../http/typed-app';
import { createPat, createPatBody, patWithTokenSchema, toUser } from '../modules/identity/index';
import { requireCsrfToken, requireSameOrigin } from './csrf';
import type { StreamRegistry } from './event-stream';
import { sessionSchema, signInBody } from './session.schemas';
import { currentSession, notSignedIn, signIn, signOut } from './session.service';
import { csrfTokenOf, SESSION_TTL_SECONDS, sessionCookieName, sessionCookieOptions } from './session-cookie';

/** Sign-in, sign-out and who-am-I for the browser, plus minting the first personal access token. */
export function sessionRoutes(app: TypedApp, deps: Deps, streams: StreamRegistry) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const cookieOptions = sessionCookieOptions(deps.config);
  const cookieName = sessionCookieName(deps.config);
  // A session that ends here takes its open event streams on this host with it, at once.
  const endStreams = (sessionId: string) => streams.endSession(sessionId, 'signed_out');

  // Same-origin for every state change here, sign-in included (login CSRF).
  app.addHook('onRequest', async (req) => {
    if (req.routeOptions.url?.startsWith('/session')) requireSameOrigin(req, deps.config);
  });

  const signedIn = async (req: FastifyRequest) => {
    const found = await currentSession(ctx(req), req.cookies[cookieName]);
    if (!found) throw notSignedIn();
    requireCsrfToken(req, found.secret);
    return found;
  };

  app.post('/session', {
    config: publicRateLimit(deps.config),
    schema: { body: signInBody, response: { 201: sessionSchema, ...errorResponses } },
    handler: async (req, reply) => {
      // A new session every time, and the one the browser held before is ended: no fixation.
      const { secret, session } = await signIn(ctx(req), req.body, req.cookies[cookieName], endStreams);
      reply.setCookie(cookieName, secret, { ...cookieOptions, maxAge: SESSION_TTL_SECONDS });
      return reply.status(201).send({ ...session, csrf_token: csrfTokenOf(secret) });
    },
  });

  app.get('/session', {
    schema: { response: { 200: sessionSchema, ...errorResponses } },
    handler: async (req) => {
      const { user, session, secret } = await signedIn(req);
      return { user: toUser(user), expires_at: iso(session.expiresAt), csrf_token: csrfTokenOf(secret) };
    },
  });

  app.delete('/session', {
    schema: { response: { ...noContent, ...errorResponses } },
    handler: async (req, reply) => {
      const found = await currentSession(ctx(req), req.cookies[cookieName]);
      if (found) requireCsrfToken(req, found.secret);
      await signOut(ctx(req), req.cookies[cookieName], endStreams);
      return reply
        .clearCookie(cookieName, cookieOptions)
        .header('clear-site-data', '"cache", "storage"')
        .status(204)
        .send(null);
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
