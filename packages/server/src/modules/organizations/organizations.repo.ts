import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { members, organizations } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type OrganizationRow = typeof organizations.$inferSelect;

/** Who is listing: a user sees the organizations they belong to, an API key only its own. */
export type Lister = { userId: string } | { organizationId: string };

export async function listOrganizations(db: DbOrTx, lister: Lister, query: ListQuery) {
  const visible =
    'userId' in lister
      ? sql`${organizations.id} in (select ${members.organizationId} from ${members} where ${members.userId} = ${lister.userId})`
      : eq(organizations.id, lister.organizationId);
  return paginate({
    query,
    sorts: {
      organization_created_at: { column: organizations.createdAt, kind: 'timestamp' },
      organization_updated_at: { column: organizations.updatedAt, kind: 'timestamp' },
      organization_name: { column: organizations.name, kind: 'text' },
    },
    tiebreak: organizations.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(organizations)
        .where(and(visible, where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({
      value:
        query.sort_by === 'organization_name'
          ? r.name
          : query.sort_by === 'organization_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: r.slug,
    }),
  });
}

export async function findOrganization(db: DbOrTx, id: string): Promise<OrganizationRow | null> {
  const [row] = await db.select().from(organizations).where(eq(organizations.id, id)).limit(1);
  return row ?? null;
}

export async function organizationSlugTaken(db: DbOrTx, slug: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(organizations)
    .where(eq(organizations.slug, slug))
    .limit(1);
  return Boolean(row);
}

/**
 * Serializes membership decisions of one organization (last owner, one pending invitation per
 * address): every such transaction locks the organization row first.
 */
export async function lockOrganization(tx: Tx, id: string): Promise<OrganizationRow | null> {
  const [row] = await tx.select().from(organizations).where(eq(organizations.id, id)).for('update');
  return row ?? null;
}

/** The first member of a new organization, its owner (the members module manages the rest). */
export async function insertOwner(db: DbOrTx, organizationId: string, userId: string) {
  await db.insert(members).values({ organizationId, userId, role: 'owner' });
}

export async function insertOrganization(db: DbOrTx, values: typeof organizations.$inferInsert) {
  const [row] = await db.insert(organizations).values(values).returning();
  return row;
}

export async function updateOrganization(
  db: DbOrTx,
  id: string,
  values: Partial<Pick<typeof organizations.$inferInsert, 'name' | 'eventLogRetentionDays'>>,
) {
  const [row] = await db
    .update(organizations)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(organizations.id, id))
    .returning();
  return row;
}

/** Every tenant table references organizations with ON DELETE CASCADE. */
export async function deleteOrganization(db: DbOrTx, id: string) {
  await db.delete(organizations).where(eq(organizations.id, id));
}
