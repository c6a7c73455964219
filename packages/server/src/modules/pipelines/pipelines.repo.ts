import { and, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { pipelineRuns, pipelines } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type PipelineRow = typeof pipelines.$inferSelect;
export type PipelineWithLatest = PipelineRow & { latestSpecHash: string | null };

// The newest version by push time; versions are immutable, so "latest" is simply the last push.
// Spelled out: drizzle renders a column inside a select list without its table name.
const latestSpecHash = sql<string | null>`(
  select v.spec_hash from pipeline_versions v
  where v.pipeline_id = "pipelines"."id"
  order by v.created_at desc, v.id desc limit 1)`;

const columns = { pipeline: pipelines, latestSpecHash };

const flatten = (r: { pipeline: PipelineRow; latestSpecHash: string | null }): PipelineWithLatest => ({
  ...r.pipeline,
  latestSpecHash: r.latestSpecHash,
});

export async function listPipelines(db: DbOrTx, projectId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      pipeline_created_at: { column: pipelines.createdAt, kind: 'timestamp' },
      pipeline_updated_at: { column: pipelines.updatedAt, kind: 'timestamp' },
      pipeline_name: { column: pipelines.name, kind: 'text' },
    },
    tiebreak: pipelines.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select(columns)
          .from(pipelines)
          .where(and(eq(pipelines.projectId, projectId), where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map(flatten),
    keyOf: (r) => ({
      value:
        query.sort_by === 'pipeline_name'
          ? r.name
          : query.sort_by === 'pipeline_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: r.slug,
    }),
  });
}

export async function findPipeline(db: DbOrTx, projectId: string, slug: string) {
  const [row] = await db
    .select(columns)
    .from(pipelines)
    .where(and(eq(pipelines.projectId, projectId), eq(pipelines.slug, slug)))
    .limit(1);
  return row ? flatten(row) : null;
}

/** The pipeline locked for the rest of the transaction: serialises pushes, deploys and deletes. */
export async function lockPipeline(tx: Tx, projectId: string, slug: string): Promise<PipelineRow | null> {
  const [row] = await tx
    .select()
    .from(pipelines)
    .where(and(eq(pipelines.projectId, projectId), eq(pipelines.slug, slug)))
    .for('update');
  return row ?? null;
}

export async function pipelineSlugTaken(db: DbOrTx, projectId: string, slug: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(pipelines)
    .where(and(eq(pipelines.projectId, projectId), eq(pipelines.slug, slug)))
    .limit(1);
  return Boolean(row);
}

export async function insertPipeline(db: DbOrTx, values: typeof pipelines.$inferInsert) {
  const [row] = await db.insert(pipelines).values(values).returning();
  return row;
}

export async function updatePipeline(
  db: DbOrTx,
  id: string,
  values: Partial<Pick<typeof pipelines.$inferInsert, 'name' | 'description'>>,
) {
  const [row] = await db
    .update(pipelines)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(pipelines.id, id))
    .returning();
  return row;
}

/** Marks the pipeline changed (a new version was pushed). */
export async function touchPipeline(db: DbOrTx, id: string) {
  await db.update(pipelines).set({ updatedAt: new Date() }).where(eq(pipelines.id, id));
}

export async function hasLiveRuns(db: DbOrTx, pipelineId: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(pipelineRuns)
    .where(
      and(
        eq(pipelineRuns.pipelineId, pipelineId),
        inArray(pipelineRuns.state, ['queued', 'running', 'canceling']),
      ),
    )
    .limit(1);
  return Boolean(row);
}

export async function deletePipeline(db: DbOrTx, id: string) {
  await db.delete(pipelines).where(eq(pipelines.id, id));
}
