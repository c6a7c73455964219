import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../env';
import { forbidden } from '../http/errors';
import { csrfTokenOf } from './session-cookie';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export const isSafeMethod = (method: string) => SAFE.has(method);

/**
 * The app and API hosts are same-site, so SameSite alone does not stop a page on one from posting
 * to the other: every state-changing request must come from the app's own origin. Browsers say so
 * in Sec-Fetch-Site; older ones only send Origin, which must then match exactly. A request with
 * neither comes from no browser and still needs the session's CSRF token to change anything.
 */
export function requireSameOrigin(req: FastifyRequest, config: Config) {
  if (isSafeMethod(req.method)) return;
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') {
    if (site === 'same-origin' || site === 'none') return;
    throw forbidden('cross-origin requests to the app host are refused');
  }
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const own = new Set([`http://${req.headers.host}`, `https://${req.headers.host}`]);
  try {
    own.add(new URL(config.publicUrl).origin);
  } catch {
    // An unset or odd public URL only narrows the accepted origins to the Host header's.
  }
  if (!own.has(origin)) throw forbidden('cross-origin requests to the app host are refused');
}

/** Every state-changing request of a signed-in page carries the session's token in x-csrf-token. */
export function requireCsrfToken(req: FastifyRequest, sessionSecret: string) {
  if (isSafeMethod(req.method)) return;
  const sent = req.headers['x-csrf-token'];
  const want = Buffer.from(csrfTokenOf(sessionSecret));
  const got = Buffer.from(typeof sent === 'string' ? sent : '');
  if (got.length !== want.length || !timingSafeEqual(got, want)) {
    throw forbidden('the x-csrf-token header is missing or does not match the session');
  }
}
