import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { apiKeys, invitations, members, organizations, roles } from '../../db/schema/index';

export type RoleRow = typeof roles.$inferSelect;

/** Custom roles are few per organization, so they are listed whole and paged in memory. */
export async function listCustomRoles(db: DbOrTx, organizationId: string): Promise<RoleRow[]> {
  return db.select().from(roles).where(eq(roles.organizationId, organizationId));
}

/** When the organization was made: its built-in roles date from then. */
export async function organizationCreatedAt(db: DbOrTx, organizationId: string): Promise<Date | null> {
  const [row] = await db
    .select({ createdAt: organizations.createdAt })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  return row?.createdAt ?? null;
}

export async function findRole(db: DbOrTx, organizationId: string, slug: string): Promise<RoleRow | null> {
  const [row] = await db
    .select()
    .from(roles)
    .where(and(eq(roles.organizationId, organizationId), eq(roles.slug, slug)))
    .limit(1);
  return row ?? null;
}

export async function insertRole(db: DbOrTx, values: typeof roles.$inferInsert) {
  const [row] = await db.insert(roles).values(values).returning();
  return row;
}

export async function updateRole(
  db: DbOrTx,
  id: string,
  values: Partial<Pick<typeof roles.$inferInsert, 'name' | 'description' | 'permissions'>>,
) {
  const [row] = await db
    .update(roles)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(roles.id, id))
    .returning();
  return row;
}

export async function deleteRole(db: DbOrTx, id: string) {
  await db.delete(roles).where(eq(roles.id, id));
}

/** What still holds a role: members, acceptable invitations and unrevoked API keys. */
export async function roleUsage(db: DbOrTx, organizationId: string, slug: string) {
  const count = sql<number>`count(*)::int`;
  const [m] = await db
    .select({ n: count })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.role, slug)));
  const [i] = await db
    .select({ n: count })
    .from(invitations)
    .where(
      and(
        eq(invitations.organizationId, organizationId),
        eq(invitations.role, slug),
        eq(invitations.status, 'pending'),
        gt(invitations.expiresAt, new Date()),
      ),
    );
  const [k] = await db
    .select({ n: count })
    .from(apiKeys)
    .where(
      and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.role, slug), isNull(apiKeys.revokedAt)),
    );
  return { members: Number(m?.n ?? 0), invitations: Number(i?.n ?? 0), apiKeys: Number(k?.n ?? 0) };
}
