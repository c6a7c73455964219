import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { buildApp } from '../app';
import type { Deps } from '../context';
import { timeOrderedId } from '../db/ids';
import { frameworkErrorOptions, installErrorHandling } from '../http/error-handler';
import { AppError, errorBody } from '../http/errors';
import { installJsonBody } from '../http/json-body';
import { requestLineLogger, requestSerializer } from '../http/logging';
import { installNoStore } from '../http/no-store';
import { installRateLimit } from '../http/rate-limit';
import { OneLinePerRequest } from '../http/request-log';
import { type RouteInfo, routeMatcher } from '../http/route-table';
import { registerBff } from './bff';
import { streamRegistry } from './event-stream';
import { setSecurityHeaders } from './security-headers';
import { sessionRoutes } from './session.routes';
import { serveWebApp } from './static-files';

/**
 * The browser host: cookie sessions only. API tokens never belong here
 * (docs/api-conventions.md#tokens), so a request carrying one is refused before anything else looks
 * at it, and the token is not logged.
 *
 * `api` is the API host whose routes answer /api (app-host/bff.ts): `serve` passes its own, so
 * the modules' routes are built once. Without it the app host builds a private one (not
 * listening), closed with the app host.
 */
export async function buildAppHost(
  deps: Deps,
  opts: { api?: FastifyInstance } = {},
): Promise<FastifyInstance> {
  let api = opts.api;
  if (!api) {
    const own = await buildApp(deps);
    await own.ready();
    api = own;
  }
  const app = Fastify({
    loggerInstance: deps.log.child({ host: 'app' }, { serializers: { req: requestSerializer as any } }),
    logController: new OneLinePerRequest(requestLineLogger(deps.log).child({ host: 'app' })),
    genReqId: () => timeOrderedId(),
    bodyLimit: deps.config.bodyLimitBytes,
    trustProxy: false,
    ...frameworkErrorOptions(),
    // The pino-typed instance does not fit the plugin signatures; the API host casts alike.
  }) as unknown as FastifyInstance;
  // Registered first: runs before rate limiting, cookies and every route.
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    setSecurityHeaders(reply);
    if (/^\s*bearer\s/i.test(req.headers.authorization ?? '')) {
      const err = new AppError(
        'API_TOKEN_NOT_ACCEPTED',
        'the app host does not accept API tokens; send them to the API host instead',
      );
      return reply.status(400).send(errorBody(err, req.id));
    }
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installNoStore(app);
  const routeTable: RouteInfo[] = [];
  app.addHook('onRoute', (r) => {
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) {
      if (m !== 'HEAD') routeTable.push({ method: m, url: r.url, access: undefined, hidden: true });
    }
  });
  installErrorHandling(app, { allowedMethods: routeMatcher(routeTable) });
  // The API host's body parser for every route here (the /api mount's are the API host's own).
  installJsonBody(app);
  // Bearer requests are already refused, so the per-token limit falls back to per address here.
  await installRateLimit(app, deps.config);
  await app.register(cookie);
  // The event streams decorate requests with who is calling; the /api mount fills them in.
  app.decorateRequest('principal', null);
  app.decorateRequest('scope', null);

  // The event streams open on this host: capped per session and user, ended by sign-out, and
  // ended before the server closes so that no open stream holds the shutdown.
  const streams = streamRegistry(deps.config.streams);
  app.addHook('preClose', async () => streams.endAll('shutting_down'));
  if (!opts.api) {
    const own = api;
    app.addHook('onClose', async () => own.close());
  }
  const typed = app.withTypeProvider<ZodTypeProvider>();
  sessionRoutes(typed, deps, streams);
  await registerBff(app, deps, streams, api);
  app.get('/healthz', { config: { rateLimit: false } }, async () => ({ status: 'ok' }));
  serveWebApp(app, deps.config);
  return app;
}
