import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { projects } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type ProjectRow = typeof projects.$inferSelect;

export async function listProjects(db: DbOrTx, organizationId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      project_created_at: { column: projects.createdAt, kind: 'timestamp' },
      project_updated_at: { column: projects.updatedAt, kind: 'timestamp' },
      project_name: { column: projects.name, kind: 'text' },
    },
    tiebreak: projects.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(projects)
        .where(and(eq(projects.organizationId, organizationId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({
      value:
        query.sort_by === 'project_name'
          ? r.name
          : query.sort_by === 'project_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: r.slug,
    }),
  });
}

export async function findProject(
  db: DbOrTx,
  organizationId: string,
  slug: string,
): Promise<ProjectRow | null> {
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.organizationId, organizationId), eq(projects.slug, slug)))
    .limit(1);
  return row ?? null;
}

/** The project row locked for the rest of the transaction (serialises changes to its environments). */
export async function lockProject(tx: Tx, organizationId: string, slug: string): Promise<ProjectRow | null> {
  const [row] = await tx
    .select()
    .from(projects)
    .where(and(eq(projects.organizationId, organizationId), eq(projects.slug, slug)))
    .for('update');
  return row ?? null;
}

export async function projectSlugTaken(db: DbOrTx, organizationId: string, slug: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(projects)
    .where(and(eq(projects.organizationId, organizationId), eq(projects.slug, slug)))
    .limit(1);
  return Boolean(row);
}

export async function insertProject(db: DbOrTx, values: typeof projects.$inferInsert) {
  const [row] = await db.insert(projects).values(values).returning();
  return row;
}

export async function updateProject(
  db: DbOrTx,
  id: string,
  values: Partial<Pick<typeof projects.$inferInsert, 'name' | 'description'>>,
) {
  const [row] = await db
    .update(projects)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(projects.id, id))
    .returning();
  return row;
}

export async function deleteProject(db: DbOrTx, id: string) {
  await db.delete(projects).where(eq(projects.id, id));
}
