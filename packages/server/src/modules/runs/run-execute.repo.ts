import { type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { executeNamed } from '../../db/named';

// An execute request as one autocommitted statement (docs/scaling.md): it reads the project and
// its enabled, live environment, the pipeline, its active deployment's spec and a run already
// holding the slug, and only when every check of docs/runs.md passes on what it read (protected
// environment confirmed, slug free, deployed, inputs as declared) inserts the run, its sealed
// input, its queue job with the announcement and its event. What it read comes back, each part
// null when missing, so the caller answers the same errors in the same order as reading them one
// by one would. No transaction stays open across round trips.

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

export type ExecuteAtOnce = {
  organizationId: string;
  slugs: { project: string; environment: string; pipeline: string };
  /** The new run's id and slug (the slug is also looked up: a run holding it stops the insert). */
  runId: string;
  runSlug: string;
  confirmation: string | null;
  /** The given input's keys, sorted. */
  inputKeys: string[];
  /** The sealed input values (none when no input is given). */
  sealed: { id: string; kid: string; ciphertext: string } | null;
  /** CTE bodies written once per row of `from` (the inserted run; the event also has `ok`). */
  job: (from: SQL) => SQL;
  event: (from: SQL) => SQL;
};

export type Executed = {
  target: ExecuteTarget | null;
  /** The run as inserted; null when a check failed or the slug was taken meanwhile. */
  created: { createdAt: Date; attempt: number } | null;
};

type ExecutedRow = Row & { created_ms: number | null; attempt: number | null };

export async function executeAtOnce(db: DbOrTx, a: ExecuteAtOnce): Promise<Executed> {
  const keys = JSON.stringify(a.inputKeys);
  const inputs = sql.raw(`coalesce(t.spec->'inputs', '{}'::jsonb)`);
  const rows = await executeNamed(
    db,
    sql`
    with t as (
      select p.id as project_id, p.organization_id, e.id as environment_id, e.slug as environment_slug,
             e.protected as environment_protected, pl.id as pipeline_id, pl.slug as pipeline_slug,
             d.spec_hash, d.spec, r.id as run_id, r.pipeline_id as run_pipeline_id,
             r.environment_id as run_environment_id
        from projects p
        left join environments e
          on e.organization_id = p.organization_id and e.slug = ${a.slugs.environment}
         and e.deleted_at is null
         and exists (select 1 from project_environments l where l.project_id = p.id and l.environment_id = e.id)
        left join pipelines pl on pl.project_id = p.id and pl.slug = ${a.slugs.pipeline}
        left join lateral (
          select pd.spec_hash, v.spec from pipeline_deployments pd
            join pipeline_versions v on v.pipeline_id = pd.pipeline_id and v.spec_hash = pd.spec_hash
           where pd.pipeline_id = pl.id and pd.environment_id = e.id and pd.active
           limit 1) d on true
        left join lateral (
          select id, pipeline_id, environment_id from pipeline_runs
           where organization_id = p.organization_id and slug = ${a.runSlug}
           limit 1) r on true
       where p.organization_id = ${a.organizationId} and p.slug = ${a.slugs.project}
       limit 1
    ), ok as (
      select t.* from t
       where t.environment_id is not null and t.pipeline_id is not null and t.run_id is null
         and (not t.environment_protected or t.environment_slug is not distinct from ${a.confirmation}::text)
         and t.spec_hash is not null
         and not exists (select 1 from jsonb_each(${inputs}) i
                          where coalesce((i.value->>'required')::boolean, false) and not ${keys}::jsonb ? i.key)
         and not exists (select 1 from jsonb_array_elements_text(${keys}::jsonb) k(key) where not ${inputs} ? k.key)
    ), run as (
      insert into pipeline_runs (id, organization_id, pipeline_id, environment_id, slug, spec_hash, state,
                                 "trigger", input_keys)
      select ${a.runId}::uuid, ok.organization_id, ok.pipeline_id, ok.environment_id, ${a.runSlug},
             ok.spec_hash, 'queued', 'api', ${keys}::jsonb
        from ok
      on conflict (organization_id, slug) do nothing
      returning id, slug, created_at, attempt
    ),
    ${
      a.sealed
        ? sql`sealed as (
      insert into pipeline_run_inputs (id, organization_id, run_id, kid, ciphertext)
      select ${a.sealed.id}::uuid, ${a.organizationId}::uuid, run.id, ${a.sealed.kid}, ${a.sealed.ciphertext}
        from run
    ),`
        : sql``
    }
    job as (${a.job(sql.raw('run'))}),
    ev as (${a.event(sql.raw('run, ok'))})
    select t.*, (select floor(extract(epoch from run.created_at) * 1000)::float8 from run) as created_ms,
           (select run.attempt from run) as attempt
      from t`,
  );
  const row = (rows as ExecutedRow[])[0];
  if (!row) return { target: null, created: null };
  const created =
    row.created_ms === null
      ? null
      : { createdAt: new Date(Number(row.created_ms)), attempt: Number(row.attempt) };
  return { target: targetOf(row), created };
}

function targetOf(row: Row): ExecuteTarget {
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
