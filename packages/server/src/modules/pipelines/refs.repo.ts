import { and, eq, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { dataSourceBindings, dataSourceRefs } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type RefRow = typeof dataSourceRefs.$inferSelect;

export async function listRefs(db: DbOrTx, pipelineId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      data_source_ref_created_at: { column: dataSourceRefs.createdAt, kind: 'timestamp' },
      data_source_ref_updated_at: { column: dataSourceRefs.updatedAt, kind: 'timestamp' },
      data_source_ref_name: { column: dataSourceRefs.name, kind: 'text' },
    },
    tiebreak: dataSourceRefs.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(dataSourceRefs)
        .where(and(eq(dataSourceRefs.pipelineId, pipelineId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({
      value:
        query.sort_by === 'data_source_ref_name'
          ? r.name
          : query.sort_by === 'data_source_ref_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: r.slug,
    }),
  });
}

export async function findRef(db: DbOrTx, pipelineId: string, slug: string): Promise<RefRow | null> {
  const [row] = await db
    .select()
    .from(dataSourceRefs)
    .where(and(eq(dataSourceRefs.pipelineId, pipelineId), eq(dataSourceRefs.slug, slug)))
    .limit(1);
  return row ?? null;
}

export async function refsOf(db: DbOrTx, pipelineId: string): Promise<RefRow[]> {
  return db.select().from(dataSourceRefs).where(eq(dataSourceRefs.pipelineId, pipelineId));
}

export async function insertRef(db: DbOrTx, values: typeof dataSourceRefs.$inferInsert) {
  const [row] = await db.insert(dataSourceRefs).values(values).returning();
  return row;
}

export async function updateRef(
  db: DbOrTx,
  id: string,
  values: Pick<typeof dataSourceRefs.$inferInsert, 'dataSourceType' | 'requiredCapabilities'>,
) {
  await db
    .update(dataSourceRefs)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(dataSourceRefs.id, id));
}

export async function deleteRefs(db: DbOrTx, ids: string[]) {
  if (ids.length > 0) await db.delete(dataSourceRefs).where(inArray(dataSourceRefs.id, ids));
}

/** The ids among `refIds` that are bound in at least one environment. */
export async function boundRefIds(db: DbOrTx, refIds: string[]): Promise<Set<string>> {
  if (refIds.length === 0) return new Set();
  const rows = await db
    .selectDistinct({ refId: dataSourceBindings.refId })
    .from(dataSourceBindings)
    .where(inArray(dataSourceBindings.refId, refIds));
  return new Set(rows.map((r) => r.refId));
}
