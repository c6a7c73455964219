import type { Ctx } from '../../context';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors';
import { iso } from '../../http/fields';
import { chooseSlug } from '../../http/slugs';
import { hashToken } from '../../http/tokens';
import type { Me } from './me';
import { checkPassword, hashPassword, hasPassword } from './passwords';
import { deleteSessionsOfUser } from './sessions.repo';
import { recordAccountEvent } from './user-events';
import * as repo from './users.repo';
import type { SignUpInput, UpdateMeInput } from './users.schemas';

export function toUser(
  u: Pick<repo.UserRow, 'slug' | 'email' | 'name' | 'emailVerifiedAt' | 'createdAt' | 'updatedAt'>,
) {
  return {
    slug: u.slug,
    email: u.email,
    name: u.name,
    email_verified: u.emailVerifiedAt !== null,
    created_at: iso(u.createdAt),
    updated_at: iso(u.updatedAt),
  };
}

const actorOfMe = (me: Me) => ({ type: 'user' as const, slug: me.userSlug });

// A chosen slug that is taken is a conflict; a registered address is not (see signUp).
const slugTaken = () => conflict('that user slug is taken; choose another or leave slug out');

/**
 * Sign-up never says whether an address is registered (docs/account.md): with a taken address
 * it answers what a new sign-up answers (201, the would-be account) and mails the address's
 * owner instead of making an account. The slug is settled first, the same way for both, so a
 * taken slug cannot be used to tell the two apart.
 */
export async function signUp(ctx: Ctx, input: SignUpInput) {
  const db = ctx.deps.db;
  const email = input.email.trim().toLowerCase();
  // Hash before any lookup, so a taken address answers no faster than a free one.
  const passwordHash = await hashPassword(input.password);
  if (input.slug !== undefined && (await repo.userSlugTaken(db, input.slug))) throw slugTaken();
  const slug = await chooseSlug(input.slug, input.name, (s) => repo.userSlugTaken(db, s));
  const user = await db.transaction(async (tx) => {
    if (await repo.userSlugTaken(tx, slug)) throw slugTaken();
    const existing = await repo.findUserByEmail(tx, email);
    if (existing) {
      await ctx.deps.queue.enqueue(tx, 'email.account_exists', { userId: existing.id });
      const now = new Date();
      return { slug, email, name: input.name, emailVerifiedAt: null, createdAt: now, updatedAt: now };
    }
    const row = await repo.insertUser(tx, { slug, email, name: input.name, passwordHash });
    // The mail goes out only if the account commits; the token is made at send time.
    await ctx.deps.queue.enqueue(tx, 'email.verification', { userId: row.id });
    return row;
  });
  return toUser(user);
}

const invalidToken = () =>
  validationFailed(
    [{ path: 'token', code: 'invalid_token', message: 'the token is invalid, expired or already used' }],
    'the verification token is invalid, expired or already used',
  );

export async function verifyEmail(ctx: Ctx, token: string) {
  const user = await ctx.deps.db.transaction(async (tx) => {
    const now = new Date();
    const userId = await repo.consumeVerificationToken(tx, hashToken(token), now);
    if (!userId) throw invalidToken();
    const before = await repo.findUserById(tx, userId);
    if (!before) throw invalidToken();
    if (before.emailVerifiedAt) return before;
    const row = await repo.updateUser(tx, userId, { emailVerifiedAt: now });
    await recordAccountEvent(
      tx,
      row,
      { actor: { type: 'user', slug: row.slug }, requestId: ctx.requestId },
      { action: 'update', metadata: { fields: ['email_verified'] } },
    );
    return row;
  });
  return toUser(user);
}

export async function getMe(ctx: Ctx, me: Me) {
  const row = await repo.findUserById(ctx.deps.db, me.userId);
  if (!row) throw notFound('user');
  return toUser(row);
}

export async function updateMe(ctx: Ctx, me: Me, input: UpdateMeInput) {
  const db = ctx.deps.db;
  const current = await repo.findUserById(db, me.userId);
  if (!current) throw notFound('user');
  let passwordHash: string | undefined;
  // An account created without a password (setup, bootstrap) sets its first one with the
  // owner's own token alone: there is no present password to confirm.
  if (input.password !== undefined && hasPassword(current.passwordHash)) {
    if (input.current_password === undefined) {
      throw validationFailed([
        {
          path: 'current_password',
          code: 'required',
          message: 'current_password is required to change the password',
        },
      ]);
    }
    if (!(await checkPassword(current.passwordHash, input.current_password))) {
      throw validationFailed([
        { path: 'current_password', code: 'incorrect', message: 'current_password is not correct' },
      ]);
    }
  }
  if (input.password !== undefined) passwordHash = await hashPassword(input.password);
  const changes = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(passwordHash ? { passwordHash } : {}),
  };
  if (Object.keys(changes).length === 0) return toUser(current);
  const row = await db.transaction(async (tx) => {
    const updated = await repo.updateUser(tx, me.userId, changes);
    // A new password ends every browser session, so one opened with the old password is gone.
    if (passwordHash) await deleteSessionsOfUser(tx, me.userId);
    await recordAccountEvent(
      tx,
      updated,
      { actor: actorOfMe(me), requestId: ctx.requestId },
      {
        action: 'update',
        // Field names only; a password change is a credential write, hence also security.
        metadata: {
          fields: [...(input.name !== undefined ? ['name'] : []), ...(passwordHash ? ['password'] : [])],
        },
        security: Boolean(passwordHash),
      },
    );
    return updated;
  });
  return toUser(row);
}

/** Sends a fresh verification mail to an account whose address is not confirmed yet. */
export async function resendVerification(ctx: Ctx, me: Me) {
  const row = await repo.findUserById(ctx.deps.db, me.userId);
  if (!row) throw notFound('user');
  if (row.emailVerifiedAt) throw new AppError('CONFLICT', 'the email address is already verified');
  await ctx.deps.queue.enqueue(null, 'email.verification', { userId: row.id });
  return toUser(row);
}
