import { and, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { environments } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';
import { type EnvironmentRow, environmentKeyOf, environmentSortColumns } from './environment-sort';

export type { EnvironmentRow } from './environment-sort';

export async function listEnvironments(
  db: DbOrTx,
  organizationId: string,
  query: ListQuery & { include_deleted: boolean },
) {
  return paginate({
    query,
    sorts: environmentSortColumns,
    tiebreak: environments.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(environments)
        .where(
          and(
            eq(environments.organizationId, organizationId),
            query.include_deleted ? undefined : isNull(environments.deletedAt),
            where,
          ),
        )
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => environmentKeyOf(query, r),
  });
}

export async function findEnvironment(
  db: DbOrTx,
  organizationId: string,
  slug: string,
): Promise<EnvironmentRow | null> {
  const [row] = await db
    .select()
    .from(environments)
    .where(and(eq(environments.organizationId, organizationId), eq(environments.slug, slug)))
    .limit(1);
  return row ?? null;
}

/**
 * The environment row locked until the transaction ends: every change to it, its secrets,
 * variables and project links takes this lock first, so a purge or a protection change cannot
 * interleave with a write that checked the old state.
 */
export async function lockEnvironment(
  tx: Tx,
  organizationId: string,
  slug: string,
): Promise<EnvironmentRow | null> {
  const [row] = await tx
    .select()
    .from(environments)
    .where(and(eq(environments.organizationId, organizationId), eq(environments.slug, slug)))
    .for('update');
  return row ?? null;
}

export async function environmentSlugTaken(db: DbOrTx, organizationId: string, slug: string) {
  const [row] = await db
    .select({ one: sql`1` })
    .from(environments)
    .where(and(eq(environments.organizationId, organizationId), eq(environments.slug, slug)))
    .limit(1);
  return Boolean(row);
}

export async function insertEnvironment(db: DbOrTx, values: typeof environments.$inferInsert) {
  const [row] = await db.insert(environments).values(values).returning();
  return row;
}

export async function updateEnvironment(
  db: DbOrTx,
  id: string,
  values: Partial<
    Pick<
      typeof environments.$inferInsert,
      'name' | 'description' | 'color' | 'protected' | 'runTimeoutSeconds' | 'deletedAt' | 'deleteReason'
    >
  >,
) {
  const [row] = await db
    .update(environments)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(environments.id, id))
    .returning();
  return row;
}

/** Hard delete: secrets, variables and project links go with it (foreign keys cascade). */
export async function purgeEnvironment(db: DbOrTx, id: string) {
  await db.delete(environments).where(eq(environments.id, id));
}
