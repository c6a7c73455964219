import type { Actor } from '../../context';
import type { DbOrTx } from '../../db/client';
import { type EventInput, recordEvent } from '../events/index';
import { organizationsOfUser } from './users.repo';

export type AccountEvent = Omit<EventInput, 'entityType' | 'entitySlug'>;

/**
 * Events are kept per organization, but an account belongs to none in particular: an account
 * change is recorded in every organization the user is a member of, as an event on that member.
 * A user without memberships leaves no record (there is no log to put it in).
 */
export async function recordAccountEvent(
  tx: DbOrTx,
  user: { id: string; slug: string },
  src: { actor: Actor; requestId: string | null },
  e: AccountEvent,
): Promise<void> {
  for (const org of await organizationsOfUser(tx, user.id)) {
    await recordEvent(
      tx,
      { organizationId: org.id, actor: src.actor, requestId: src.requestId },
      { ...e, entityType: 'member', entitySlug: user.slug },
    );
  }
}
