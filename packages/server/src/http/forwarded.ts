import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../context';

/**
 * A request the app host hands to the API host's routes (its /api mount, app-host/bff.ts): the
 * API host runs the route, its schemas and its error wrapper, and the app host decides who the
 * caller is. One route table serves both hosts, so `serve` compiles every module's routes once.
 */
export type Forwarded = {
  /** The app host's request id: the answer and every log line carry it. */
  id: string;
  /** The app host's logger (`host: 'app'`). */
  log: FastifyBaseLogger;
  /** The caller from the session cookie (CSRF checked for a state change); null when signed out. */
  principal(): Promise<Principal | null>;
  /** Counts an unauthenticated request in the app host's per-address budget (throws once spent). */
  refused(address: string): void;
};

/** The mount's prefix on the app host; the API host's routes are matched without it. */
export const FORWARD_PREFIX = '/api';

// Keyed by Node's own request object, which nothing outside this process can create or label.
const forwardedRequests = new WeakMap<IncomingMessage, Forwarded>();

export function forwardedOf(raw: IncomingMessage): Forwarded | undefined {
  return forwardedRequests.get(raw);
}

/** The route's pattern as its host answers it (`/api/…` on the app host), for audit records. */
export function routeUrlOf(req: FastifyRequest): string | undefined {
  const url = req.routeOptions.url;
  return url !== undefined && forwardedRequests.has(req.raw) ? FORWARD_PREFIX + url : url;
}

/**
 * Hands an app-host request to the API host, before its body is read: the API host parses it
 * (the same JSON parser and body limit) and answers on the same response. Headers the app host set
 * so far (request id, security headers) are kept; the request's line is the app host's, with the
 * path as the browser sent it.
 */
export function forward(api: FastifyInstance, req: FastifyRequest, reply: FastifyReply, f: Forwarded) {
  const raw = req.raw as IncomingMessage & { originalUrl?: string };
  const res = reply.raw as ServerResponse;
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) res.setHeader(name, value as string | number | string[]);
  }
  const url = raw.url ?? '/';
  raw.originalUrl = url;
  raw.url = url.slice(FORWARD_PREFIX.length) || '/';
  forwardedRequests.set(raw, f);
  reply.hijack();
  api.routing(raw, res);
}
