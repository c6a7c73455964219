import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../env';
import { bearerFacts } from './auth';
import { AppError } from './errors';
import { forwardedOf, routeUrlOf } from './forwarded';

/**
 * Per token for authenticated calls, per address otherwise (docs/api-conventions.md#rate-limits).
 * Only a well-formed token (valid checksum) gets a bucket of its own: a client inventing a new
 * bearer string per request still counts against its address. The app host's /api requests,
 * answered by the API host's routes (http/forwarded.ts), count per address in buckets of their own.
 */
function keyOf(req: FastifyRequest): string {
  if (forwardedOf(req.raw)) return `f:${req.ip}`;
  const facts = bearerFacts(req);
  return facts?.kind ? `t:${facts.hash.slice(0, 24)}` : `a:${req.ip}`;
}

export async function installRateLimit(app: FastifyInstance, config: Config) {
  await app.register(rateLimit, {
    global: true,
    max: config.rateLimit.perToken,
    timeWindow: config.rateLimit.windowMs,
    keyGenerator: keyOf,
    // RateLimit-Limit / -Remaining / -Reset and Retry-After (IETF draft names).
    enableDraftSpec: true,
    errorResponseBuilder: (_req, ctx) => {
      const retry = Math.max(1, Math.ceil(ctx.ttl / 1000));
      return new AppError('RATE_LIMITED', `rate limit of ${ctx.max} requests exceeded; retry in ${retry} s`, {
        headers: { 'retry-after': String(retry) },
      });
    },
  });
}

/** Route config for the public identity endpoints: a tighter limit per client address. */
export function publicRateLimit(config: Config) {
  return {
    rateLimit: {
      max: config.rateLimit.publicPerAddress,
      timeWindow: config.rateLimit.windowMs,
      keyGenerator: (req: FastifyRequest) => `p:${req.ip}:${routeUrlOf(req)}`,
    },
  };
}
