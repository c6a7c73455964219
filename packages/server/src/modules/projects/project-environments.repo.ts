import { and, eq, isNull, ne } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { environments, projectEnvironments, projects } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';
import { type EnvironmentRow, environmentKeyOf, environmentSortColumns } from '../environments/index';

export type ProjectEnvironmentRow = EnvironmentRow & { isDefault: boolean };

/**
 * A project, a live environment and their link, by slugs, in one statement (every route under
 * a project environment starts here; three round trips before, docs/scaling.md); null when any
 * of the three is missing.
 */
export async function findProjectEnvironmentRows(
  db: DbOrTx,
  organizationId: string,
  projectSlug: string,
  environmentSlug: string,
) {
  const [row] = await db
    .select({ project: projects, environment: environments, isDefault: projectEnvironments.isDefault })
    .from(projects)
    .innerJoin(
      environments,
      and(
        eq(environments.organizationId, organizationId),
        eq(environments.slug, environmentSlug),
        isNull(environments.deletedAt),
      ),
    )
    .innerJoin(
      projectEnvironments,
      and(
        eq(projectEnvironments.projectId, projects.id),
        eq(projectEnvironments.environmentId, environments.id),
      ),
    )
    .where(and(eq(projects.organizationId, organizationId), eq(projects.slug, projectSlug)))
    .limit(1);
  return row ?? null;
}

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
