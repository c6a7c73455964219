import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { dataSourceBindings, dataSourceRefs, dataSources, pipelines } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type BindingRow = typeof dataSourceBindings.$inferSelect;

const columns = {
  pipelineSlug: pipelines.slug,
  refSlug: dataSourceRefs.slug,
  refName: dataSourceRefs.name,
  dataSourceSlug: dataSources.slug,
  dataSourceName: dataSources.name,
  dataSourceType: dataSources.type,
  dataSourceActive: dataSources.isActive,
  dataSourceReadOnly: dataSources.readOnly,
  boundAt: dataSourceBindings.boundAt,
  updatedAt: dataSourceBindings.updatedAt,
};
export type BindingView = {
  pipelineSlug: string;
  refSlug: string;
  refName: string;
  dataSourceSlug: string;
  dataSourceName: string;
  dataSourceType: string;
  dataSourceActive: boolean;
  dataSourceReadOnly: boolean;
  boundAt: Date;
  updatedAt: Date;
};

// A binding has no slug of its own; the list cursor needs a slug-shaped identifier unique in
// the list, so it is derived from (pipeline, ref): 16 hex characters of their MD5.
const cursorId = sql`left(md5(${pipelines.slug} || '/' || ${dataSourceRefs.slug}), 16)`;
const cursorIdOf = (r: BindingView) =>
  createHash('md5').update(`${r.pipelineSlug}/${r.refSlug}`).digest('hex').slice(0, 16);

function joined(db: DbOrTx) {
  return db
    .select(columns)
    .from(dataSourceBindings)
    .innerJoin(dataSourceRefs, eq(dataSourceRefs.id, dataSourceBindings.refId))
    .innerJoin(pipelines, eq(pipelines.id, dataSourceBindings.pipelineId))
    .innerJoin(dataSources, eq(dataSources.id, dataSourceBindings.dataSourceId));
}

/** Bindings of every pipeline of a project in one environment. */
export async function listBindings(
  db: DbOrTx,
  projectId: string,
  environmentId: string,
  query: ListQuery & { pipeline_slug?: string },
) {
  return paginate({
    query,
    sorts: {
      data_source_binding_bound_at: { column: dataSourceBindings.boundAt, kind: 'timestamp' },
      data_source_binding_updated_at: { column: dataSourceBindings.updatedAt, kind: 'timestamp' },
    },
    tiebreak: cursorId,
    fetch: ({ where, orderBy, limit }) =>
      joined(db)
        .where(
          and(
            eq(pipelines.projectId, projectId),
            eq(dataSourceBindings.environmentId, environmentId),
            query.pipeline_slug ? eq(pipelines.slug, query.pipeline_slug) : undefined,
            where,
          ),
        )
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({
      value: query.sort_by === 'data_source_binding_updated_at' ? r.updatedAt : r.boundAt,
      id: cursorIdOf(r),
    }),
  });
}

export async function findBindingView(db: DbOrTx, refId: string, environmentId: string) {
  const [row] = await joined(db)
    .where(and(eq(dataSourceBindings.refId, refId), eq(dataSourceBindings.environmentId, environmentId)))
    .limit(1);
  return row ?? null;
}

/** Every binding of one pipeline in one environment, with its data source (for validation). */
export async function bindingsOfPipeline(db: DbOrTx, pipelineId: string, environmentId: string) {
  return joined(db).where(
    and(eq(dataSourceBindings.pipelineId, pipelineId), eq(dataSourceBindings.environmentId, environmentId)),
  );
}

export async function findBinding(db: DbOrTx, refId: string, environmentId: string) {
  const [row] = await db
    .select()
    .from(dataSourceBindings)
    .where(and(eq(dataSourceBindings.refId, refId), eq(dataSourceBindings.environmentId, environmentId)))
    .limit(1);
  return row ?? null;
}

export async function insertBinding(db: DbOrTx, values: typeof dataSourceBindings.$inferInsert) {
  await db.insert(dataSourceBindings).values(values);
}

export async function rebind(db: DbOrTx, id: string, dataSourceId: string) {
  await db
    .update(dataSourceBindings)
    .set({ dataSourceId, updatedAt: new Date() })
    .where(eq(dataSourceBindings.id, id));
}

export async function deleteBinding(db: DbOrTx, id: string) {
  await db.delete(dataSourceBindings).where(eq(dataSourceBindings.id, id));
}
