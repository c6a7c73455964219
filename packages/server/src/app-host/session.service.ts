import type { Ctx } from '../context';
import { AppError } from '../http/errors';
import { iso } from '../http/fields';
import { hashToken, issueSecret } from '../http/tokens';
import {
  checkPassword,
  deleteSession,
  findActiveSession,
  findUserByEmail,
  insertSession,
  recordAccountEvent,
  toUser,
  touchSession,
} from '../modules/identity/index';
import type { SignInInput } from './session.schemas';
import { SESSION_TTL_SECONDS, sessionSecretOf } from './session-cookie';

// Unknown address and wrong password get this same answer, after the same amount of work.
export const signInFailed = () =>
  new AppError('UNAUTHENTICATED', 'the email address or password is incorrect');
export const notSignedIn = () => new AppError('UNAUTHENTICATED', 'sign in first');

/**
 * Checks the password and, when it is right, stores a new session; the secret goes to the cookie.
 * The session the browser held before ends whatever the outcome; onEnded hears of it.
 */
export async function signIn(
  ctx: Ctx,
  input: SignInInput,
  previousCookie?: string,
  onEnded?: (sessionId: string) => void,
) {
  const db = ctx.deps.db;
  await signOut(ctx, previousCookie, onEnded);
  const user = await findUserByEmail(db, input.email.trim().toLowerCase());
  const ok = await checkPassword(user?.passwordHash ?? null, input.password);
  if (!user) throw signInFailed();
  const { secret, hash } = issueSecret();
  const session = await db.transaction(async (tx) => {
    await recordAccountEvent(
      tx,
      user,
      // A failed attempt proves nothing about who made it.
      {
        actor: ok ? { type: 'user', slug: user.slug } : { type: 'unknown', slug: null },
        requestId: ctx.requestId,
      },
      { action: 'read', securityOnly: true, metadata: { outcome: ok ? 'sign_in' : 'sign_in_failed' } },
    );
    return ok
      ? insertSession(tx, { userId: user.id, tokenHash: hash, ttlSeconds: SESSION_TTL_SECONDS })
      : null;
  });
  if (!session) throw signInFailed();
  return { secret, session: { user: toUser(user), expires_at: iso(session.expiresAt) } };
}

/** The stored, unexpired session of a cookie and its user; null for anything else. */
export async function currentSession(ctx: Ctx, cookie: string | undefined) {
  const secret = sessionSecretOf(cookie);
  if (!secret) return null;
  const found = await findActiveSession(ctx.deps.db, hashToken(secret));
  if (!found) return null;
  if (found.stale) await touchSession(ctx.deps.db, found.session.id);
  return { ...found, secret };
}

/**
 * Deletes the cookie's session, so a copy of the cookie stops working too. onEnded hears of it
 * before the deletion commits, so whatever it ends is ended before anyone else can see the
 * session gone (the app host's streams: their own re-check would give another reason).
 */
export async function signOut(
  ctx: Ctx,
  cookie: string | undefined,
  onEnded?: (sessionId: string) => void,
): Promise<void> {
  const found = await currentSession(ctx, cookie);
  if (!found) return;
  const { session, user } = found;
  await ctx.deps.db.transaction(async (tx) => {
    if (!(await deleteSession(tx, session.id))) return;
    onEnded?.(session.id);
    await recordAccountEvent(
      tx,
      user,
      { actor: { type: 'user', slug: user.slug }, requestId: ctx.requestId },
      { action: 'read', securityOnly: true, metadata: { outcome: 'sign_out' } },
    );
  });
}
