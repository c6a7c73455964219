import { and, eq, isNull, ne } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { environments, projectEnvironments } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';
import { type EnvironmentRow, environmentKeyOf, environmentSortColumns } from '../environments/index';

export type ProjectEnvironmentRow = EnvironmentRow & { isDefault: boolean };

/** The live environments enabled for a project; soft-deleted ones are left out until restored. */
export async function listProjectEnvironments(db: DbOrTx, projectId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: environmentSortColumns,
    tiebreak: environments.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select({ env: environments, isDefault: projectEnvironments.isDefault })
          .from(projectEnvironments)
          .innerJoin(environments, eq(environments.id, projectEnvironments.environmentId))
          .where(and(eq(projectEnvironments.projectId, projectId), isNull(environments.deletedAt), where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map((r): ProjectEnvironmentRow => ({ ...r.env, isDefault: r.isDefault })),
    keyOf: (r) => environmentKeyOf(query, r),
  });
}

export async function findLink(db: DbOrTx, projectId: string, environmentId: string) {
  const [row] = await db
    .select()
    .from(projectEnvironments)
    .where(
      and(eq(projectEnvironments.projectId, projectId), eq(projectEnvironments.environmentId, environmentId)),
    )
    .limit(1);
  return row ?? null;
}

/** Enables (or updates) the link; a new default first clears the old one. Takes the transaction. */
export async function upsertLink(db: DbOrTx, projectId: string, environmentId: string, isDefault: boolean) {
  if (isDefault) {
    await db
      .update(projectEnvironments)
      .set({ isDefault: false, updatedAt: new Date() })
      .where(
        and(
          eq(projectEnvironments.projectId, projectId),
          eq(projectEnvironments.isDefault, true),
          ne(projectEnvironments.environmentId, environmentId),
        ),
      );
  }
  const existing = await findLink(db, projectId, environmentId);
  if (existing) {
    if (existing.isDefault === isDefault) return { created: false, changed: false };
    await db
      .update(projectEnvironments)
      .set({ isDefault, updatedAt: new Date() })
      .where(eq(projectEnvironments.id, existing.id));
    return { created: false, changed: true };
  }
  await db.insert(projectEnvironments).values({ projectId, environmentId, isDefault });
  return { created: true, changed: true };
}

export async function deleteLink(db: DbOrTx, id: string) {
  await db.delete(projectEnvironments).where(eq(projectEnvironments.id, id));
}
