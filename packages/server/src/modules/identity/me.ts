import type { FastifyRequest } from 'fastify';
import { userOf } from '../../http/auth';

/** The signed-in user as services see it, whether from a token or an app session. */
export type Me = { userId: string; userSlug: string };

/** The user of a token-authenticated request (routes declare access.user()). */
export function meOf(req: FastifyRequest): Me {
  const p = userOf(req);
  return { userId: p.userId, userSlug: p.userSlug };
}
