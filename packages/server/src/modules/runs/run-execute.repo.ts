import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';

// What an execute request needs before it writes, read in one statement: the project and its
// enabled, live environment, the pipeline, its active deployment's spec and a run already holding
// the requested slug. Each part is null when missing, so the caller answers the same errors in
// the same order as reading them one by one would (docs/runs.md).

export type ExecuteTarget = {
  projectId: string;
  /** Null when the environment is missing, deleted or not enabled for the project. */
  environment: { id: string; slug: string; protected: boolean } | null;
  pipeline: { id: string; slug: string } | null;
  deployment: { specHash: string; spec: unknown } | null;
  /** A run of the organization with the requested slug (any pipeline and environment). */
  sameSlug: { id: string; pipelineId: string; environmentId: string } | null;
};

type Row = {
  project_id: string;
  environment_id: string | null;
  environment_slug: string | null;
  environment_protected: boolean | null;
  pipeline_id: string | null;
  pipeline_slug: string | null;
  spec_hash: string | null;
  spec: unknown;
  run_id: string | null;
  run_pipeline_id: string | null;
  run_environment_id: string | null;
};

export async function findExecuteTarget(
  db: DbOrTx,
  organizationId: string,
  slugs: { project: string; environment: string; pipeline: string; run: string | null },
): Promise<ExecuteTarget | null> {
  const res: any = await db.execute(sql`
    select p.id as project_id, e.id as environment_id, e.slug as environment_slug,
           e.protected as environment_protected, pl.id as pipeline_id, pl.slug as pipeline_slug,
           d.spec_hash, d.spec, r.id as run_id, r.pipeline_id as run_pipeline_id,
           r.environment_id as run_environment_id
      from projects p
      left join environments e
        on e.organization_id = p.organization_id and e.slug = ${slugs.environment}
       and e.deleted_at is null
       and exists (select 1 from project_environments l where l.project_id = p.id and l.environment_id = e.id)
      left join pipelines pl on pl.project_id = p.id and pl.slug = ${slugs.pipeline}
      left join lateral (
        select pd.spec_hash, v.spec from pipeline_deployments pd
          join pipeline_versions v on v.pipeline_id = pd.pipeline_id and v.spec_hash = pd.spec_hash
         where pd.pipeline_id = pl.id and pd.environment_id = e.id and pd.active
         limit 1) d on true
      left join lateral (
        select id, pipeline_id, environment_id from pipeline_runs
         where organization_id = p.organization_id and slug = ${slugs.run}
         limit 1) r on true
     where p.organization_id = ${organizationId} and p.slug = ${slugs.project}
     limit 1`);
  const row = ((res.rows ?? res) as Row[])[0];
  if (!row) return null;
  return {
    projectId: row.project_id,
    environment: row.environment_id
      ? { id: row.environment_id, slug: row.environment_slug!, protected: row.environment_protected! }
      : null,
    pipeline: row.pipeline_id ? { id: row.pipeline_id, slug: row.pipeline_slug! } : null,
    deployment: row.spec_hash ? { specHash: row.spec_hash, spec: row.spec } : null,
    sameSlug: row.run_id
      ? { id: row.run_id, pipelineId: row.run_pipeline_id!, environmentId: row.run_environment_id! }
      : null,
  };
}
