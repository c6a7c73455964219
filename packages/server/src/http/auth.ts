import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps, Principal, Scope } from '../context';
import { type Permission, visibilityOf } from '../permissions';
import { addressBudget } from './address-budget';
import { AppError, forbidden, notFound, unauthenticated, validationFailed } from './errors';
import { forwardedOf, routeUrlOf } from './forwarded';
import { hashToken, parseToken, type TokenKind } from './tokens';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    scope: Scope | null;
  }
}

export function bearerOf(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

export type BearerFacts = { token: string; kind: TokenKind | null; hash: string };
const bearerFactsOf = new WeakMap<FastifyRequest, BearerFacts | null>();

/**
 * The bearer token with its parsed kind (null when malformed or its checksum fails) and its
 * hash, worked out once per request: the rate limiter and the authentication hook both need them.
 */
export function bearerFacts(req: FastifyRequest): BearerFacts | null {
  let facts = bearerFactsOf.get(req);
  if (facts === undefined) {
    const token = bearerOf(req);
    facts = token ? { token, kind: parseToken(token), hash: hashToken(token) } : null;
    bearerFactsOf.set(req, facts);
  }
  return facts;
}

/** The authenticated principal of a request; throws 401 when there is none. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw unauthenticated();
  return req.principal;
}

export function userOf(req: FastifyRequest): Extract<Principal, { type: 'user' }> {
  const p = principalOf(req);
  if (p.type !== 'user') throw forbidden('this operation needs a personal access token, not an API key');
  return p;
}

/** The tenant scope of an organization route, set by the preValidation hook. */
export function scopeOf(req: FastifyRequest): Scope {
  if (!req.scope) throw notFound('organization');
  return req.scope;
}

/** Who a request acts as; the API host reads the bearer token, the app host its session cookie. */
export type PrincipalResolver = (req: FastifyRequest) => Promise<Principal | null>;

/** A refused permission check, as the security audit records it. */
export type PermissionDenial = {
  permission: Permission;
  method: string;
  route: string | undefined;
  requestId: string;
};

/**
 * What authentication needs from the domain, handed in by the composition root (app.ts), so this
 * plumbing imports no module.
 */
export type AuthPorts = {
  /** The principal of a bearer token; null when unknown, revoked or expired. */
  principalOfToken: (token: string, now: Date, facts: BearerFacts) => Promise<Principal | null>;
  /** The principal's scope in an organization; null when it cannot see the organization. */
  scopeIn: (principal: Principal, organizationSlug: string) => Promise<Scope | null>;
  /** Records the refusal in the organization's security audit. */
  recordDenial: (scope: Scope, denial: PermissionDenial) => Promise<void>;
};

/**
 * Authentication for one host. Returns its principal resolver and how it counts an
 * unauthenticated request, which the app host hands along with a request it forwards to the API
 * host's routes (http/forwarded.ts): that request's caller comes from the app host's session, and
 * its refusals count in the app host's budget.
 */
export function installAuth(
  app: FastifyInstance,
  deps: Deps,
  ports: AuthPorts,
  resolve?: PrincipalResolver,
): { principal: PrincipalResolver; refused(address: string): void } {
  if (!app.hasRequestDecorator('principal')) {
    app.decorateRequest('principal', null);
    app.decorateRequest('scope', null);
  }
  // Unauthenticated requests to protected routes never reach the per-token limiter (it keys on
  // a token that has resolved), so they are counted per address here, before any lookup.
  const budget = addressBudget({
    max: deps.config.rateLimit.perToken,
    windowMs: deps.config.rateLimit.windowMs,
  });
  const byBearer: PrincipalResolver = async (req) => {
    const facts = bearerFacts(req);
    if (!facts) return null;
    const { hash } = facts;
    if (!budget.knownToken(hash)) budget.check(req.ip);
    const principal = await ports.principalOfToken(facts.token, new Date(), facts);
    if (principal) budget.rememberToken(hash);
    return principal;
  };
  const principalFor = resolve ?? byBearer;

  app.addHook('onRequest', async (req) => {
    const access = req.routeOptions.config?.access;
    if (!access || access.kind === 'public') return;
    const forwarded = forwardedOf(req.raw);
    const principal = await (forwarded ? forwarded.principal() : principalFor(req));
    if (!principal) {
      if (forwarded) forwarded.refused(req.ip);
      else budget.spend(req.ip);
      throw unauthenticated();
    }
    if (access.kind === 'principal' && access.userOnly && principal.type !== 'user') {
      throw new AppError('FORBIDDEN', 'this operation needs a personal access token, not an API key');
    }
    req.principal = principal;
  });

  // Before body validation: another tenant's organization is 404 whatever the request holds.
  app.addHook('preValidation', async (req) => {
    const access = req.routeOptions.config?.access;
    if (access?.kind !== 'org' || !req.principal) return;
    const orgSlug = (req.params as Record<string, string> | undefined)?.organization;
    if (!orgSlug) throw notFound('organization');
    // The path value is at most 100 characters (docs/api-conventions.md#slugs): longer is a malformed
    // request (400), and says nothing about which organizations exist.
    if (orgSlug.length > 100) {
      throw validationFailed([
        {
          path: 'params.organization',
          code: 'too_big',
          message: 'the organization slug is at most 100 characters',
        },
      ]);
    }
    const scope = await ports.scopeIn(req.principal, orgSlug);
    if (!scope) throw notFound('organization');
    if (!scope.permissions.has(access.permission)) {
      const visible = scope.permissions.has(visibilityOf(access.permission));
      await ports.recordDenial(scope, {
        permission: access.permission,
        method: req.method,
        route: routeUrlOf(req),
        requestId: req.id,
      });
      if (!visible) throw notFound();
      throw forbidden(`this operation needs the ${access.permission} permission`);
    }
    req.scope = scope;
  });
  return { principal: principalFor, refused: (address) => budget.spend(address) };
}
