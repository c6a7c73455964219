import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { alertDestinations, alertPolicies, alertPolicyDestinations } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type PolicyRow = typeof alertPolicies.$inferSelect;
export type DestinationLink = { id: string; slug: string };
export type PolicyWithDestinations = PolicyRow & { destinations: DestinationLink[] };

async function withDestinations(db: DbOrTx, rows: PolicyRow[]): Promise<PolicyWithDestinations[]> {
  if (rows.length === 0) return [];
  const links = await db
    .select({
      policyId: alertPolicyDestinations.policyId,
      id: alertDestinations.id,
      slug: alertDestinations.slug,
    })
    .from(alertPolicyDestinations)
    .innerJoin(alertDestinations, eq(alertDestinations.id, alertPolicyDestinations.destinationId))
    .where(
      inArray(
        alertPolicyDestinations.policyId,
        rows.map((r) => r.id),
      ),
    )
    .orderBy(asc(alertPolicyDestinations.position));
  return rows.map((r) => ({
    ...r,
    destinations: links.filter((l) => l.policyId === r.id).map((l) => ({ id: l.id, slug: l.slug })),
  }));
}

export async function listPolicies(db: DbOrTx, organizationId: string, query: ListQuery) {
  const page = await paginate({
    query,
    sorts: { alert_policy_created_at: { column: alertPolicies.createdAt, kind: 'timestamp' } },
    tiebreak: alertPolicies.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(alertPolicies)
        .where(and(eq(alertPolicies.organizationId, organizationId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
  return { ...page, items: await withDestinations(db, page.items) };
}

/** Every enabled policy of the organization, with its destinations (the dispatcher's input). */
export async function enabledPolicies(db: DbOrTx, organizationId: string) {
  const rows = await db
    .select()
    .from(alertPolicies)
    .where(and(eq(alertPolicies.organizationId, organizationId), eq(alertPolicies.enabled, true)));
  return withDestinations(db, rows);
}

export async function findPolicy(db: DbOrTx, organizationId: string, slug: string) {
  const [row] = await db
    .select()
    .from(alertPolicies)
    .where(and(eq(alertPolicies.organizationId, organizationId), eq(alertPolicies.slug, slug)))
    .limit(1);
  return row ? (await withDestinations(db, [row]))[0] : null;
}

export async function policySlugTaken(db: DbOrTx, organizationId: string, slug: string) {
  const [row] = await db
    .select({ one: sql`1` })
    .from(alertPolicies)
    .where(and(eq(alertPolicies.organizationId, organizationId), eq(alertPolicies.slug, slug)))
    .limit(1);
  return Boolean(row);
}

export async function insertPolicy(db: DbOrTx, values: typeof alertPolicies.$inferInsert) {
  const [row] = await db.insert(alertPolicies).values(values).returning();
  return row;
}

export async function updatePolicy(
  db: DbOrTx,
  id: string,
  values: Partial<typeof alertPolicies.$inferInsert>,
) {
  const [row] = await db
    .update(alertPolicies)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(alertPolicies.id, id))
    .returning();
  return row;
}

export async function setPolicyDestinations(db: DbOrTx, policyId: string, destinationIds: string[]) {
  await db.delete(alertPolicyDestinations).where(eq(alertPolicyDestinations.policyId, policyId));
  if (destinationIds.length === 0) return;
  await db
    .insert(alertPolicyDestinations)
    .values(destinationIds.map((destinationId, position) => ({ policyId, destinationId, position })));
}

export async function deletePolicy(db: DbOrTx, id: string) {
  await db.delete(alertPolicies).where(eq(alertPolicies.id, id));
}

export async function destinationsBySlug(db: DbOrTx, organizationId: string, slugs: string[]) {
  if (slugs.length === 0) return [];
  return db
    .select({ id: alertDestinations.id, slug: alertDestinations.slug })
    .from(alertDestinations)
    .where(and(eq(alertDestinations.organizationId, organizationId), inArray(alertDestinations.slug, slugs)));
}
