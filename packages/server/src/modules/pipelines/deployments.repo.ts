import { and, desc, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { pipelineDeployments, pipelines, pipelineValidations, pipelineVersions } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type DeploymentRow = typeof pipelineDeployments.$inferSelect;
export type DeploymentView = DeploymentRow & { pipelineSlug: string; validationSlug: string | null };

/** The active deployment of a pipeline in an environment, with its version's spec. */
export async function activeDeployment(db: DbOrTx, pipelineId: string, environmentId: string) {
  const [row] = await db
    .select({
      id: pipelineDeployments.id,
      slug: pipelineDeployments.slug,
      specHash: pipelineDeployments.specHash,
      spec: pipelineVersions.spec,
    })
    .from(pipelineDeployments)
    .innerJoin(
      pipelineVersions,
      and(
        eq(pipelineVersions.pipelineId, pipelineDeployments.pipelineId),
        eq(pipelineVersions.specHash, pipelineDeployments.specHash),
      ),
    )
    .where(
      and(
        eq(pipelineDeployments.pipelineId, pipelineId),
        eq(pipelineDeployments.environmentId, environmentId),
        eq(pipelineDeployments.active, true),
      ),
    )
    .orderBy(desc(pipelineDeployments.createdAt))
    .limit(1);
  return row ?? null;
}

/**
 * Across every organization (a worker runs them all): the kinds of the data sources bound where
 * a pipeline is deployed, and whether an active deployment's spec has a transform step.
 */
export async function deployedRunPath(db: DbOrTx): Promise<{ types: string[]; transforms: boolean }> {
  const res: any = await db.execute(sql`
    select coalesce((select array_agg(distinct s.type order by s.type)
                       from pipeline_deployments d
                       join data_source_bindings b
                         on b.pipeline_id = d.pipeline_id and b.environment_id = d.environment_id
                       join data_sources s on s.id = b.data_source_id
                      where d.active), '{}'::text[]) as types,
           exists (select 1
                     from pipeline_deployments d
                     join pipeline_versions v on v.pipeline_id = d.pipeline_id and v.spec_hash = d.spec_hash
                    where d.active and v.spec @? '$.steps[*] ? (@.kind == "transform")') as transforms`);
  const row = (res.rows ?? res)[0];
  return { types: row.types as string[], transforms: row.transforms === true };
}

/**
 * Across every organization: the specs of the active deployments, at most `limit` of them, the
 * most recently deployed last (a worker's warm start plans them, jobs/warm-start.ts). One row per
 * pipeline and spec hash: a version deployed to several environments is planned once.
 */
export async function deployedSpecs(
  db: DbOrTx,
  limit: number,
): Promise<{ pipelineId: string; specHash: string; spec: unknown }[]> {
  const res: any = await db.execute(sql`
    select pipeline_id, spec_hash, spec from (
      select distinct on (d.pipeline_id, d.spec_hash) d.pipeline_id, d.spec_hash, v.spec, d.created_at
        from pipeline_deployments d
        join pipeline_versions v on v.pipeline_id = d.pipeline_id and v.spec_hash = d.spec_hash
       where d.active
       order by d.pipeline_id, d.spec_hash, d.created_at desc) latest
    order by created_at desc
    limit ${limit}`);
  const rows = (res.rows ?? res) as { pipeline_id: string; spec_hash: string; spec: unknown }[];
  return rows.reverse().map((r) => ({ pipelineId: r.pipeline_id, specHash: r.spec_hash, spec: r.spec }));
}

const columns = {
  deployment: pipelineDeployments,
  pipelineSlug: pipelines.slug,
  validationSlug: pipelineValidations.slug,
};
const flatten = (r: { deployment: DeploymentRow; pipelineSlug: string; validationSlug: string | null }) => ({
  ...r.deployment,
  pipelineSlug: r.pipelineSlug,
  validationSlug: r.validationSlug,
});

function joined(db: DbOrTx) {
  return db
    .select(columns)
    .from(pipelineDeployments)
    .innerJoin(pipelines, eq(pipelines.id, pipelineDeployments.pipelineId))
    .leftJoin(pipelineValidations, eq(pipelineValidations.id, pipelineDeployments.validationId));
}

export async function listDeployments(
  db: DbOrTx,
  projectId: string,
  environmentId: string,
  query: ListQuery & { pipeline_slug?: string },
) {
  return paginate({
    query,
    sorts: { deployment_created_at: { column: pipelineDeployments.createdAt, kind: 'timestamp' } },
    tiebreak: pipelineDeployments.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await joined(db)
          .where(
            and(
              eq(pipelines.projectId, projectId),
              eq(pipelineDeployments.environmentId, environmentId),
              query.pipeline_slug ? eq(pipelines.slug, query.pipeline_slug) : undefined,
              where,
            ),
          )
          .orderBy(...orderBy)
          .limit(limit)
      ).map(flatten),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

export async function findDeploymentView(db: DbOrTx, id: string): Promise<DeploymentView | null> {
  const [row] = await joined(db).where(eq(pipelineDeployments.id, id)).limit(1);
  return row ? flatten(row) : null;
}

/** Every deployment of the pipeline in the environment stops being the one runs use. */
export async function deactivate(db: DbOrTx, pipelineId: string, environmentId: string) {
  await db
    .update(pipelineDeployments)
    .set({ active: false })
    .where(
      and(
        eq(pipelineDeployments.pipelineId, pipelineId),
        eq(pipelineDeployments.environmentId, environmentId),
        eq(pipelineDeployments.active, true),
      ),
    );
}

export async function insertDeployment(db: DbOrTx, values: typeof pipelineDeployments.$inferInsert) {
  const [row] = await db.insert(pipelineDeployments).values(values).returning();
  return row;
}
