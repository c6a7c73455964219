import { and, eq, lte, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { invitations, users } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';
import type { InvitationStatus } from './invitations.schemas';

export type InvitationRow = typeof invitations.$inferSelect & { invitedByUserSlug: string | null };

const columns = { inv: invitations, invitedByUserSlug: users.slug };

function flatten(r: {
  inv: typeof invitations.$inferSelect;
  invitedByUserSlug: string | null;
}): InvitationRow {
  return { ...r.inv, invitedByUserSlug: r.invitedByUserSlug };
}

export async function listInvitations(
  db: DbOrTx,
  organizationId: string,
  status: InvitationStatus | undefined,
  query: ListQuery,
) {
  return paginate({
    query,
    sorts: {
      invitation_created_at: { column: invitations.createdAt, kind: 'timestamp' },
      invitation_updated_at: { column: invitations.updatedAt, kind: 'timestamp' },
      invitation_email: { column: invitations.email, kind: 'text' },
      invitation_expires_at: { column: invitations.expiresAt, kind: 'timestamp' },
    },
    tiebreak: invitations.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select(columns)
          .from(invitations)
          .leftJoin(users, eq(users.id, invitations.invitedByUserId))
          .where(
            and(
              eq(invitations.organizationId, organizationId),
              status ? eq(invitations.status, status) : undefined,
              where,
            ),
          )
          .orderBy(...orderBy)
          .limit(limit)
      ).map(flatten),
    keyOf: (r) => ({
      value:
        query.sort_by === 'invitation_email'
          ? r.email
          : query.sort_by === 'invitation_updated_at'
            ? r.updatedAt
            : query.sort_by === 'invitation_expires_at'
              ? r.expiresAt
              : r.createdAt,
      id: r.slug,
    }),
  });
}

/** By slug; invitation slugs are global, so the organization filter is optional. */
export async function findInvitation(db: DbOrTx, slug: string, organizationId?: string) {
  const [row] = await db
    .select(columns)
    .from(invitations)
    .leftJoin(users, eq(users.id, invitations.invitedByUserId))
    .where(
      and(
        eq(invitations.slug, slug),
        organizationId ? eq(invitations.organizationId, organizationId) : undefined,
      ),
    )
    .limit(1);
  return row ? flatten(row) : null;
}

export async function hasPendingInvitation(db: DbOrTx, organizationId: string, email: string) {
  const [row] = await db
    .select({ one: sql`1` })
    .from(invitations)
    .where(
      and(
        eq(invitations.organizationId, organizationId),
        eq(invitations.email, email),
        eq(invitations.status, 'pending'),
      ),
    )
    .limit(1);
  return Boolean(row);
}

/**
 * Marks pending invitations past their expiry as expired and returns them, so the caller can
 * record each expiry once: a row only matches while it is still pending.
 */
export async function expirePending(
  db: DbOrTx,
  filter: { organizationId: string } | { slug: string },
  now = new Date(),
) {
  return db
    .update(invitations)
    .set({ status: 'expired', updatedAt: now })
    .where(
      and(
        'slug' in filter
          ? eq(invitations.slug, filter.slug)
          : eq(invitations.organizationId, filter.organizationId),
        eq(invitations.status, 'pending'),
        lte(invitations.expiresAt, now),
      ),
    )
    .returning({
      organizationId: invitations.organizationId,
      slug: invitations.slug,
      email: invitations.email,
    });
}

export async function insertInvitation(db: DbOrTx, values: typeof invitations.$inferInsert) {
  const [row] = await db.insert(invitations).values(values).returning();
  return row;
}

export async function setInvitationStatus(
  db: DbOrTx,
  id: string,
  status: InvitationStatus,
  respondedAt: Date | null,
) {
  await db
    .update(invitations)
    .set({ status, respondedAt, updatedAt: new Date() })
    .where(eq(invitations.id, id));
}
