import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from './context';
import { timeOrderedId } from './db/ids';
import { type AuthPorts, installAuth } from './http/auth';
import { frameworkErrorOptions, installErrorHandling } from './http/error-handler';
import { notFound } from './http/errors';
import { forwardedOf } from './http/forwarded';
import { installJsonBody } from './http/json-body';
import { LazyChildLogger, requestLineLogger, requestSerializer } from './http/logging';
import { installMetrics } from './http/metrics';
import { installNoStore } from './http/no-store';
import { createOpenApiTransform, transformOpenApiDocument } from './http/openapi-transform';
import { installRateLimit } from './http/rate-limit';
import { OneLinePerRequest } from './http/request-log';
import { type RouteInfo, routeMatcher } from './http/route-table';
import { responseSerializerCompiler } from './http/serializer';
import { recordPermissionDenial } from './modules/events/index';
import { resolvePrincipal } from './modules/identity/index';
import { resolveScope } from './modules/organizations/index';
import { modules } from './modules/registry';

export type App = FastifyInstance & { routeTable: RouteInfo[] };

/** What authentication asks of the domain: http/auth.ts imports no module, this root wires them. */
export function authPorts(deps: Deps): AuthPorts {
  return {
    principalOfToken: (token, now, facts) =>
      resolvePrincipal(deps.store, token, now, facts, deps.config.apiKeyCacheMs),
    scopeIn: (principal, organizationSlug) => resolveScope(deps.db, principal, organizationSlug),
    recordDenial: (scope, denial) => recordPermissionDenial(deps.db, scope, denial),
  };
}

/** The API host's own routes, outside the modules: not part of the app host's /api. */
const HOST_ROUTES = new Set(['/openapi.json', '/healthz', '/readyz', '/metrics']);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export async function buildApp(deps: Deps): Promise<App> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.log.child({ host: 'api' }, { serializers: { req: requestSerializer as any } }),
    bodyLimit: config.bodyLimitBytes,
    // Keep a caller's correlation id when it is a UUID, as the error wrapper promises. A request
    // the app host forwards (http/forwarded.ts) keeps the app host's id, and its log lines are
    // the app host's.
    genReqId: (req) => {
      const forwarded = forwardedOf(req);
      if (forwarded) return forwarded.id;
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && UUID.test(given) ? given.toLowerCase() : timeOrderedId();
    },
    logController: new OneLinePerRequest(
      requestLineLogger(deps.log).child({ host: 'api' }),
      (req) => forwardedOf(req.raw) !== undefined,
    ),
    childLoggerFactory: (logger, bindings, opts, raw) =>
      new LazyChildLogger(
        (forwardedOf(raw)?.log ?? logger) as any,
        bindings,
        opts,
      ) as unknown as typeof logger,
    trustProxy: false,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 500 },
    ...frameworkErrorOptions(),
  }) as unknown as App;
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializerCompiler({ check: config.checkResponses }));

  const routeTable: RouteInfo[] = [];
  app.routeTable = routeTable;
  app.addHook('onRoute', (r) => {
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    for (const m of methods) {
      if (m === 'HEAD' || r.url.startsWith('/documentation')) continue;
      routeTable.push({ method: m, url: r.url, access: r.config?.access, hidden: r.schema?.hide === true });
    }
  });
  const allowed = routeMatcher(routeTable);

  // Callback style: a synchronous hook costs no promise per request. The app host's /api
  // (http/forwarded.ts) answers the modules' routes only, never this host's own.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    if (HOST_ROUTES.has(req.routeOptions.url as string) && forwardedOf(req.raw))
      return done(notFound('route'));
    done();
  });

  installJsonBody(app);

  installErrorHandling(app, { allowedMethods: allowed });
  await installRateLimit(app, config);
  const metrics = installMetrics(app, deps.reads);
  installAuth(app, deps, authPorts(deps));
  installNoStore(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sluice API',
        version: '0.1.0',
        description:
          'JSON API of Sluice, a self-hostable data-pipeline platform. Errors use the `{ "error": { code, message, request_id, validation_errors } }` wrapper.',
      },
      servers: [{ url: `http://${config.api.host}:${config.api.port}` }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: createOpenApiTransform(),
    transformObject: transformOpenApiDocument as any,
  });

  const typed = app.withTypeProvider<ZodTypeProvider>();
  for (const register of modules) await register(typed, deps);

  app.get(
    '/openapi.json',
    { config: { access: { kind: 'public' }, rateLimit: false }, schema: { hide: true } },
    async () => app.swagger(),
  );
  app.get(
    '/healthz',
    { config: { access: { kind: 'public' }, rateLimit: false }, schema: { hide: true } },
    async () => ({
      status: 'ok',
    }),
  );
  app.get(
    '/readyz',
    { config: { access: { kind: 'public' }, rateLimit: false }, schema: { hide: true } },
    async (_req, reply) => {
      try {
        await deps.store.ping();
        return { status: 'ready', store: deps.store.kind };
      } catch {
        return reply.status(503).send({ status: 'unavailable', store: deps.store.kind });
      }
    },
  );
  app.get(
    '/metrics',
    { config: { access: { kind: 'public' }, rateLimit: false }, schema: { hide: true } },
    async (_req, reply) => {
      reply.header('content-type', metrics.contentType);
      return metrics.metrics();
    },
  );
  return app;
}
