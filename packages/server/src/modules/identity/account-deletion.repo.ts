import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import {
  accountDeletionRequests,
  events,
  invitations,
  members,
  organizations,
  users,
} from '../../db/schema/index';

export type DeletionRequestRow = typeof accountDeletionRequests.$inferSelect;
type DeletionRequestChanges = Partial<
  Pick<
    typeof accountDeletionRequests.$inferInsert,
    'state' | 'ownershipRequired' | 'organizationRemovalRequired' | 'failureReason' | 'completedAt'
  >
>;

export type MembershipStanding = {
  organizationId: string;
  organizationSlug: string;
  role: string;
  memberCount: number;
  ownerCount: number;
};

/** Each organization of the user with how many members and owners it has. */
export async function membershipStandings(db: DbOrTx, userId: string): Promise<MembershipStanding[]> {
  return db
    .select({
      organizationId: organizations.id,
      organizationSlug: organizations.slug,
      role: members.role,
      memberCount: sql<number>`(select count(*)::int from ${members} m where m.organization_id = ${organizations.id})`,
      ownerCount: sql<number>`(select count(*)::int from ${members} m where m.organization_id = ${organizations.id} and m.role = 'owner')`,
    })
    .from(members)
    .innerJoin(organizations, eq(organizations.id, members.organizationId))
    .where(eq(members.userId, userId))
    .orderBy(asc(organizations.slug));
}

/**
 * Locks the user's organizations (in id order, so two deletions cannot deadlock), so that two
 * owners deleting their accounts at once cannot both conclude "someone else still owns it".
 */
export async function lockOrganizationsOf(tx: Tx, userId: string): Promise<void> {
  const ids = tx.select({ id: members.organizationId }).from(members).where(eq(members.userId, userId));
  await tx
    .select({ id: organizations.id })
    .from(organizations)
    .where(inArray(organizations.id, ids))
    .orderBy(asc(organizations.id))
    .for('update');
}

/**
 * Removes the account; its tokens, sessions, verification tokens and memberships go with it
 * (cascade), and its deletion requests keep only user_slug (user_id is set null).
 */
/**
 * Erases the account's address from what outlives it: the audit trail keeps who acted (slugs)
 * but not the address an invitation named, and answered invitations to it go. A pending one
 * stays: it is the organization's offer, not the account's data.
 */
export async function erasePersonalData(tx: Tx, userId: string): Promise<void> {
  const [user] = await tx.select({ email: users.email }).from(users).where(eq(users.id, userId));
  if (!user) return;
  await tx
    .update(events)
    .set({ metadata: sql`(${events.metadata} - 'email') || '{"email": null, "email_erased": true}'::jsonb` })
    .where(sql`lower(${events.metadata}->>'email') = ${user.email.toLowerCase()}`);
  await tx
    .delete(invitations)
    .where(
      and(
        sql`lower(${invitations.email}) = ${user.email.toLowerCase()}`,
        sql`${invitations.status} <> 'pending'`,
      ),
    );
}

export async function deleteUser(tx: Tx, userId: string): Promise<void> {
  await tx.delete(users).where(eq(users.id, userId));
}

/** Locks the user's row: one deletion request of a user is decided at a time. */
export async function lockUser(tx: Tx, userId: string): Promise<void> {
  await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
}

/** The request still waiting for the user to resolve what blocks it, if any. */
export async function findOpenRequest(db: DbOrTx, userId: string): Promise<DeletionRequestRow | null> {
  const [row] = await db
    .select()
    .from(accountDeletionRequests)
    .where(
      and(
        eq(accountDeletionRequests.userId, userId),
        inArray(accountDeletionRequests.state, ['pending', 'ownership_required']),
      ),
    )
    .orderBy(desc(accountDeletionRequests.requestedAt), desc(accountDeletionRequests.createdAt))
    .limit(1);
  return row ?? null;
}

export async function latestRequestOf(db: DbOrTx, userId: string): Promise<DeletionRequestRow | null> {
  const [row] = await db
    .select()
    .from(accountDeletionRequests)
    .where(eq(accountDeletionRequests.userId, userId))
    .orderBy(desc(accountDeletionRequests.requestedAt), desc(accountDeletionRequests.createdAt))
    .limit(1);
  return row ?? null;
}

export async function insertRequest(
  db: DbOrTx,
  values: DeletionRequestChanges & { slug: string; userId: string; userSlug: string; state: string },
): Promise<DeletionRequestRow> {
  const [row] = await db.insert(accountDeletionRequests).values(values).returning();
  return row;
}

export async function updateRequest(
  db: DbOrTx,
  id: string,
  values: DeletionRequestChanges,
): Promise<DeletionRequestRow> {
  const [row] = await db
    .update(accountDeletionRequests)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(accountDeletionRequests.id, id))
    .returning();
  return row;
}
