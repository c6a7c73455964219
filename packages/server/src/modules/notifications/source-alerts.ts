import { eq, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { environments, pipelines, projects } from '../../db/schema/index';
import {
  placeDedupKeySql,
  type RaiseDeps,
  raiseNotification,
  resolveNotification,
} from './notifications.raise';

// What raises what (docs/alerting.md#notifications), for the sources that exist today: runs, schema
// imports, worker-side connection checks and OAuth refreshes. Each is called in the transaction
// that records the source event.

/** Failures in a row after which a pipeline's notification becomes critical. */
export const RUN_ESCALATE_AFTER = 3;

type EndedRun = { organizationId: string; pipelineId: string; environmentId: string; slug: string };

/** Slugs and name of a pipeline in an environment, for the notification's place and text. */
export type RunPlaceNames = { pipeline: string; pipelineName: string; project: string; environment: string };

async function placeOf(tx: DbOrTx, pipelineId: string, environmentId: string) {
  const [where] = await tx
    .select({
      pipeline: pipelines.slug,
      pipelineName: pipelines.name,
      project: projects.slug,
      environment: environments.slug,
    })
    .from(pipelines)
    .innerJoin(projects, eq(projects.id, pipelines.projectId))
    .innerJoin(environments, eq(environments.id, environmentId))
    .where(eq(pipelines.id, pipelineId));
  return where ?? null;
}

export async function alertRunEnded(
  tx: DbOrTx,
  deps: RaiseDeps,
  run: EndedRun,
  state: 'succeeded' | 'failed' | 'canceled',
  error: { code: string; message: string } | null,
  /** The run's place when the caller read it already (the run's lock reads it). */
  place?: RunPlaceNames | null,
) {
  if (state === 'canceled') return;
  const where = place ?? (await placeOf(tx, run.pipelineId, run.environmentId));
  if (!where) return;
  const base = {
    organizationId: run.organizationId,
    projectSlug: where.project,
    environmentSlug: where.environment,
    subject: { kind: 'pipeline', slug: where.pipeline },
  };
  const sourceRefs = [
    { kind: 'pipeline', value: where.pipeline },
    { kind: 'environment', value: where.environment },
  ];
  if (state === 'failed') {
    await raiseNotification(tx, deps, {
      ...base,
      type: 'pipeline_run_failed',
      severity: 'error',
      title: `Pipeline ${where.pipelineName} failed in ${where.environment}`,
      summary: `Run ${run.slug} failed${error ? ` (${error.code}): ${error.message}` : '.'}`.slice(0, 1000),
      sourceKind: 'pipeline_run',
      sourceAction: 'update',
      sourceRefs,
      sourceKey: `run:${run.slug}:failed`,
      escalateAfter: RUN_ESCALATE_AFTER,
    });
    return;
  }
  const resolved = await resolveNotification(tx, deps, { ...base, type: 'pipeline_run_failed' });
  if (!resolved) return;
  await raiseNotification(tx, deps, {
    ...base,
    type: 'pipeline_run_recovered',
    severity: 'info',
    title: `Pipeline ${where.pipelineName} recovered in ${where.environment}`,
    summary: `Run ${run.slug} succeeded after earlier failures.`,
    sourceKind: 'pipeline_run',
    sourceAction: 'update',
    sourceRefs,
    sourceKey: `run:${run.slug}:recovered`,
    bornResolved: true,
  });
}

/**
 * Whether ending run `r` (SQL naming a pipeline_runs row) as succeeded has a notification to
 * resolve, i.e. whether alertRunEnded would write anything: a pipeline_run_failed of its place
 * still open. Callers end a run in one statement only when it has none.
 */
export function runAlertOpenSql(r: SQL): SQL {
  const key = placeDedupKeySql(
    'pipeline_run_failed',
    sql.raw('pr.slug'),
    sql.raw('e.slug'),
    'pipeline',
    sql.raw('p.slug'),
  );
  return sql`exists (
    select 1 from pipelines p
      join projects pr on pr.id = p.project_id
      join environments e on e.id = ${r}.environment_id
      join notifications n on n.organization_id = ${r}.organization_id and n.dedup_key = ${key}
     where p.id = ${r}.pipeline_id and n.lifecycle_state <> 'resolved')`;
}

type DataSourceLike = { organizationId: string; slug: string; name: string };

/** A finished schema import: failure raises schema_import_failed, success resolves it. */
export async function alertSchemaImport(
  tx: DbOrTx,
  deps: RaiseDeps,
  ds: DataSourceLike,
  failure: { code: string; message: string } | null,
  sourceKey: string,
) {
  const base = {
    organizationId: ds.organizationId,
    projectSlug: null,
    environmentSlug: null,
    subject: { kind: 'data_source', slug: ds.slug },
  };
  if (!failure) {
    await resolveNotification(tx, deps, { ...base, type: 'schema_import_failed' });
    return;
  }
  await raiseNotification(tx, deps, {
    ...base,
    type: 'schema_import_failed',
    severity: 'warning',
    title: `Schema import of ${ds.name} failed`,
    summary: `${failure.code}: ${failure.message}`.slice(0, 1000),
    sourceKind: 'data_source',
    sourceAction: 'refresh',
    sourceRefs: [{ kind: 'data_source', value: ds.slug }],
    sourceKey,
  });
}

/** A refused credential (OAuth refresh or provider rejection): credential_failed, critical. */
export async function alertCredentialFailed(
  tx: DbOrTx,
  deps: RaiseDeps,
  ds: DataSourceLike,
  message: string,
  sourceKey: string,
) {
  await raiseNotification(tx, deps, {
    organizationId: ds.organizationId,
    projectSlug: null,
    environmentSlug: null,
    subject: { kind: 'data_source', slug: ds.slug },
    type: 'credential_failed',
    severity: 'critical',
    title: `Credentials of ${ds.name} were refused`,
    summary: message.slice(0, 1000),
    sourceKind: 'data_source',
    sourceAction: 'refresh',
    sourceRefs: [{ kind: 'data_source', value: ds.slug }],
    sourceKey,
  });
}

export async function resolveCredentialFailed(tx: DbOrTx, deps: RaiseDeps, ds: DataSourceLike) {
  await resolveNotification(tx, deps, {
    organizationId: ds.organizationId,
    projectSlug: null,
    environmentSlug: null,
    subject: { kind: 'data_source', slug: ds.slug },
    type: 'credential_failed',
  });
}

/** A connection that works again resolves its test and credential notifications. */
export async function resolveConnectionAlerts(tx: DbOrTx, deps: RaiseDeps, ds: DataSourceLike) {
  for (const type of ['data_source_test_failed', 'credential_failed'] as const) {
    await resolveNotification(tx, deps, {
      organizationId: ds.organizationId,
      projectSlug: null,
      environmentSlug: null,
      subject: { kind: 'data_source', slug: ds.slug },
      type,
    });
  }
}

type TriggerLike = { organizationId: string; slug: string; pipelineId: string; environmentId: string };

/**
 * A trigger that failed to start a run (a scheduled occurrence refused) or whose webhook is
 * being refused in a burst: pipeline_trigger_failed on the trigger; the next started run resolves it.
 */
export async function alertTriggerFailed(
  tx: DbOrTx,
  deps: RaiseDeps,
  t: TriggerLike,
  o: { severity: 'warning' | 'error'; reason: string; sourceKey: string },
) {
  const where = await placeOf(tx, t.pipelineId, t.environmentId);
  if (!where) return;
  await raiseNotification(tx, deps, {
    organizationId: t.organizationId,
    projectSlug: where.project,
    environmentSlug: where.environment,
    subject: { kind: 'pipeline_trigger', slug: t.slug },
    type: 'pipeline_trigger_failed',
    severity: o.severity,
    title: `Trigger ${t.slug} of ${where.pipelineName} failed in ${where.environment}`,
    summary: o.reason.slice(0, 1000),
    sourceKind: 'pipeline_trigger',
    sourceAction: 'execute',
    sourceRefs: [
      { kind: 'pipeline', value: where.pipeline },
      { kind: 'pipeline_trigger', value: t.slug },
      { kind: 'environment', value: where.environment },
    ],
    sourceKey: o.sourceKey,
  });
}

/** A trigger started a run again: its failure notification, if open, resolves. */
export async function resolveTriggerFailed(tx: DbOrTx, deps: RaiseDeps, t: TriggerLike) {
  const where = await placeOf(tx, t.pipelineId, t.environmentId);
  if (!where) return;
  await resolveNotification(tx, deps, {
    organizationId: t.organizationId,
    projectSlug: where.project,
    environmentSlug: where.environment,
    subject: { kind: 'pipeline_trigger', slug: t.slug },
    type: 'pipeline_trigger_failed',
  });
}
