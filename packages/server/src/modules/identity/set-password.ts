import type { Deps } from '../../context';
import { systemActor } from '../../context';
import { hashPassword } from './passwords';
import { deleteSessionsOfUser } from './sessions.repo';
import { recordAccountEvent } from './user-events';
import * as users from './users.repo';

export class UnknownUserError extends Error {}

/**
 * The operator's way to give an account a password (`sluice users set-password`), e.g. the first
 * user after bootstrap. Like a password change, it ends the account's browser sessions.
 */
export async function setUserPassword(deps: Deps, input: { email: string; password: string }) {
  const user = await users.findUserByEmail(deps.db, input.email.trim().toLowerCase());
  if (!user) throw new UnknownUserError(`no account has the email address ${input.email}`);
  const passwordHash = await hashPassword(input.password);
  await deps.db.transaction(async (tx) => {
    await users.updateUser(tx, user.id, { passwordHash });
    await deleteSessionsOfUser(tx, user.id);
    await recordAccountEvent(
      tx,
      user,
      { actor: systemActor, requestId: null },
      { action: 'update', metadata: { fields: ['password'], via: 'cli' }, security: true },
    );
  });
  return { user_slug: user.slug, email: user.email };
}
