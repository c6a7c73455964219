import type { PipelineSpec } from '@sluice/engine';
import type { ActorType, Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { AppError, conflict } from '../../http/errors';
import { iso, randomSlug } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { retireCaptures } from '../cdc/index';
import { assertProtectedConfirmation } from '../environments/index';
import { recordEvent } from '../events/index';
import * as repo from './deployments.repo';
import { eventSource, lockPipelineOf, lockPlace, requirePlace } from './pipelines.service';
import { latestValidation } from './validations.repo';
import { resolveVersion } from './versions.service';

export type ActiveDeployment = { id: string; slug: string; specHash: string; spec: PipelineSpec };

/**
 * The deployment runs use: the active one of the pipeline in the environment, with the stored
 * (already parsed, defaults applied) spec of its version; null when nothing is deployed there.
 * Pass the transaction when called inside one.
 */
export async function findActiveDeployment(
  db: DbOrTx,
  pipelineId: string,
  environmentId: string,
): Promise<ActiveDeployment | null> {
  const row = await repo.activeDeployment(db, pipelineId, environmentId);
  return row ? { id: row.id, slug: row.slug, specHash: row.specHash, spec: row.spec as PipelineSpec } : null;
}

/** What the active deployments' runs load: their data sources' kinds, and transforms (DuckDB). */
export function deployedRunPath(db: DbOrTx) {
  return repo.deployedRunPath(db);
}

export function deployedSpecs(db: DbOrTx, limit: number) {
  return repo.deployedSpecs(db, limit);
}

export function toDeployment(environmentSlug: string, r: repo.DeploymentView) {
  return {
    slug: r.slug,
    pipeline_slug: r.pipelineSlug,
    environment_slug: environmentSlug,
    spec_hash: r.specHash,
    validation_slug: r.validationSlug,
    active: r.active,
    deployed_by: {
      actor_type: (r.deployedByActorType ?? 'unknown') as ActorType,
      actor_slug: r.deployedByActorSlug,
    },
    created_at: iso(r.createdAt),
  };
}

export async function listDeployments(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  environmentSlug: string,
  query: ListQuery & { pipeline_slug?: string },
) {
  const place = await requirePlace(ctx.deps.db, scope, projectSlug, environmentSlug);
  const page = await repo.listDeployments(ctx.deps.db, place.project.id, place.environment.id, query);
  return { ...page, items: page.items.map((r) => toDeployment(place.environment.slug, r)) };
}

type DeployTarget = { project: string; environment: string; pipeline: string };

/**
 * Makes a version the one runs use in an environment. It needs the newest validation of that
 * exact spec hash in that environment to have passed; deploying the version already active
 * changes nothing and answers the current deployment (`created: false`).
 */
export async function deploy(
  ctx: Ctx,
  scope: Scope,
  at: DeployTarget,
  hashOrPrefix: string,
  confirmation: string | null,
) {
  return ctx.deps.db.transaction(async (tx) => {
    const place = await lockPlace(tx, scope, at.project, at.environment);
    const env = place.environment;
    // Locked: two deploys of one pipeline must not both stay active.
    const pipeline = await lockPipelineOf(tx, place.project.id, at.pipeline);
    const version = await resolveVersion(tx, pipeline.id, hashOrPrefix);
    assertProtectedConfirmation(env, confirmation);
    const validation = await latestValidation(tx, pipeline.id, env.id, version.specHash);
    if (!validation) throw conflict(`validate this version in ${env.slug} first`);
    if (!validation.valid)
      throw conflict(
        `the latest validation of this version in ${env.slug} (${validation.slug}) failed; fix its findings and validate again`,
      );
    const current = await repo.activeDeployment(tx, pipeline.id, env.id);
    if (current?.specHash === version.specHash) {
      const view = await repo.findDeploymentView(tx, current.id);
      if (view) return { created: false, deployment: toDeployment(env.slug, view) };
    }
    // The cdc steps the new version drops give up their captures (docs/cdc.md "Slot safety").
    await retireCaptures(tx, ctx.deps, {
      organizationId: scope.org.id,
      pipelineId: pipeline.id,
      environmentId: env.id,
      nextSpec: version.spec,
    });
    await repo.deactivate(tx, pipeline.id, env.id);
    const row = await repo.insertDeployment(tx, {
      organizationId: scope.org.id,
      pipelineId: pipeline.id,
      environmentId: env.id,
      slug: randomSlug('dep'),
      specHash: version.specHash,
      validationId: validation.id,
      active: true,
      deployedByActorType: scope.actor.type,
      deployedByActorSlug: scope.actor.slug,
    });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_deployment',
      entitySlug: row.slug,
      action: 'deploy',
      metadata: {
        project_slug: place.project.slug,
        pipeline_slug: pipeline.slug,
        environment_slug: env.slug,
        spec_hash: version.specHash,
        validation_slug: validation.slug,
        replaced_spec_hash: current?.specHash ?? null,
      },
    });
    const view = await repo.findDeploymentView(tx, row.id);
    if (!view) throw new AppError('INTERNAL', 'the deployment could not be read back');
    return { created: true, deployment: toDeployment(env.slug, view) };
  });
}

/**
 * Stops deploying the pipeline in the environment: runs can no longer be executed there
 * (PIPELINE_NOT_DEPLOYED) and the captures of its cdc steps are released by a job (docs/cdc.md
 * "Slot safety"). A protected environment needs its confirmation. Answers the deployment that
 * was active, now inactive.
 */
export async function undeploy(ctx: Ctx, scope: Scope, at: DeployTarget, confirmation: string | null) {
  return ctx.deps.db.transaction(async (tx) => {
    const place = await lockPlace(tx, scope, at.project, at.environment);
    const env = place.environment;
    const pipeline = await lockPipelineOf(tx, place.project.id, at.pipeline);
    assertProtectedConfirmation(env, confirmation);
    const current = await repo.activeDeployment(tx, pipeline.id, env.id);
    if (!current)
      throw new AppError('PIPELINE_NOT_DEPLOYED', `pipeline ${pipeline.slug} is not deployed in ${env.slug}`);
    const released = await retireCaptures(tx, ctx.deps, {
      organizationId: scope.org.id,
      pipelineId: pipeline.id,
      environmentId: env.id,
      nextSpec: null,
    });
    await repo.deactivate(tx, pipeline.id, env.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_deployment',
      entitySlug: current.slug,
      action: 'undeploy',
      metadata: {
        project_slug: place.project.slug,
        pipeline_slug: pipeline.slug,
        environment_slug: env.slug,
        spec_hash: current.specHash,
        captures_released: released,
      },
    });
    const view = await repo.findDeploymentView(tx, current.id);
    if (!view) throw new AppError('INTERNAL', 'the deployment could not be read back');
    return toDeployment(env.slug, view);
  });
}
