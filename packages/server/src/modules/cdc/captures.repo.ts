import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';

// What the cdc module reads of other domains' tables: the active deployments of an
// organization with their specs, bindings and checkpoint times. Read only.

export type DeployedRow = {
  organizationId: string;
  pipelineId: string;
  pipelineSlug: string;
  projectSlug: string;
  environmentId: string;
  environmentSlug: string;
  spec: unknown;
  bindings: { ref: string; id: string; slug: string; type: string }[];
  /** step slug → when its checkpoint was last committed (ISO 8601, as to_jsonb prints it). */
  checkpoints: Record<string, string>;
  /** step slug → its committed checkpoint text (the step's cursor). */
  cursors: Record<string, string | null>;
  /** When this deployment was made. */
  deployedAt: string;
};

const rowsOf = <T>(res: unknown): T[] =>
  (Array.isArray(res) ? res : ((res as { rows?: T[] }).rows ?? [])) as T[];

/**
 * The active deployments of the organization (every organization when null; of one pipeline,
 * when given). With `cdcOnly`, only those whose spec has a cdc step.
 */
export async function activeDeployments(
  db: DbOrTx,
  organizationId: string | null,
  pipelineId: string | null = null,
  cdcOnly = false,
): Promise<DeployedRow[]> {
  const res = await db.execute(sql`
    select p.organization_id as "organizationId", to_jsonb(d.created_at) #>> '{}' as "deployedAt", p.id as "pipelineId", p.slug as "pipelineSlug", pr.slug as "projectSlug",
           e.id as "environmentId", e.slug as "environmentSlug", v.spec,
           coalesce((select jsonb_agg(jsonb_build_object('ref', r.slug, 'id', ds.id, 'slug', ds.slug, 'type', ds.type))
                       from data_source_bindings b
                       join data_source_refs r on r.id = b.ref_id
                       join data_sources ds on ds.id = b.data_source_id
                      where b.pipeline_id = p.id and b.environment_id = e.id), '[]'::jsonb) as bindings,
           coalesce((select jsonb_object_agg(c.step_slug, c.updated_at)
                       from pipeline_checkpoints c
                      where c.pipeline_id = p.id and c.environment_id = e.id), '{}'::jsonb) as checkpoints,
           coalesce((select jsonb_object_agg(c.step_slug, c.cursor)
                       from pipeline_checkpoints c
                      where c.pipeline_id = p.id and c.environment_id = e.id), '{}'::jsonb) as cursors
      from pipeline_deployments d
      join pipelines p on p.id = d.pipeline_id
      join projects pr on pr.id = p.project_id
      join environments e on e.id = d.environment_id
      join pipeline_versions v on v.pipeline_id = d.pipeline_id and v.spec_hash = d.spec_hash
     where d.active
       and (${organizationId}::uuid is null or p.organization_id = ${organizationId}::uuid)
       and (${pipelineId}::uuid is null or p.id = ${pipelineId}::uuid)
       and (not ${cdcOnly} or exists (
             select 1 from jsonb_array_elements(v.spec->'steps') s
              where s->'operation'->>'operation_type' = 'cdc'))
     order by p.slug, e.slug`);
  return rowsOf<DeployedRow>(res);
}

/** The pipeline of the organization's project by slugs, or null. */
export async function findPipeline(
  db: DbOrTx,
  organizationId: string,
  projectSlug: string,
  pipelineSlug: string,
) {
  const res = await db.execute(sql`
    select p.id, p.slug, pr.slug as "projectSlug"
      from pipelines p join projects pr on pr.id = p.project_id
     where pr.organization_id = ${organizationId} and pr.slug = ${projectSlug} and p.slug = ${pipelineSlug}`);
  return rowsOf<{ id: string; slug: string; projectSlug: string }>(res)[0] ?? null;
}
