import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { alertDestinations, alertPolicies, alertPolicyDestinations } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type DestinationRow = typeof alertDestinations.$inferSelect;

export async function listDestinations(db: DbOrTx, organizationId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: { alert_destination_created_at: { column: alertDestinations.createdAt, kind: 'timestamp' } },
    tiebreak: alertDestinations.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(alertDestinations)
        .where(and(eq(alertDestinations.organizationId, organizationId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

export async function findDestination(db: DbOrTx, organizationId: string, slug: string) {
  const [row] = await db
    .select()
    .from(alertDestinations)
    .where(and(eq(alertDestinations.organizationId, organizationId), eq(alertDestinations.slug, slug)))
    .limit(1);
  return row ?? null;
}

export async function findDestinationById(db: DbOrTx, id: string) {
  const [row] = await db.select().from(alertDestinations).where(eq(alertDestinations.id, id)).limit(1);
  return row ?? null;
}

export async function allDestinations(db: DbOrTx, organizationId: string) {
  return db.select().from(alertDestinations).where(eq(alertDestinations.organizationId, organizationId));
}

export async function insertDestination(db: DbOrTx, values: typeof alertDestinations.$inferInsert) {
  const [row] = await db.insert(alertDestinations).values(values).returning();
  return row;
}

export async function updateDestination(
  db: DbOrTx,
  id: string,
  values: Partial<typeof alertDestinations.$inferInsert>,
) {
  const [row] = await db
    .update(alertDestinations)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(alertDestinations.id, id))
    .returning();
  return row;
}

/** Slugs of the policies that still send to this destination. */
export async function policiesUsing(db: DbOrTx, destinationId: string): Promise<string[]> {
  const rows = await db
    .select({ slug: alertPolicies.slug })
    .from(alertPolicyDestinations)
    .innerJoin(alertPolicies, eq(alertPolicies.id, alertPolicyDestinations.policyId))
    .where(eq(alertPolicyDestinations.destinationId, destinationId))
    .orderBy(alertPolicies.slug);
  return rows.map((r) => r.slug);
}

export async function deleteDestination(db: DbOrTx, id: string) {
  await db.delete(alertDestinations).where(eq(alertDestinations.id, id));
}

export async function destinationSlugTaken(db: DbOrTx, organizationId: string, slug: string) {
  const [row] = await db
    .select({ one: sql`1` })
    .from(alertDestinations)
    .where(and(eq(alertDestinations.organizationId, organizationId), eq(alertDestinations.slug, slug)))
    .limit(1);
  return Boolean(row);
}
