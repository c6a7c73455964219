import type { Ctx, Scope } from '../../context';
import type { DbOrTx, Tx } from '../../db/client';
import { conflict, notFound } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { retireCaptures } from '../cdc/index';
import { lockLiveEnvironment } from '../environments/index';
import { recordEvent } from '../events/index';
import { findProjectEnvironment, requireProject } from '../projects/index';

import * as repo from './pipelines.repo';

export function toPipeline(projectSlug: string, r: repo.PipelineWithLatest) {
  return {
    slug: r.slug,
    name: r.name,
    description: r.description,
    project_slug: projectSlug,
    latest_spec_hash: r.latestSpecHash,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export const eventSource = (scope: Scope, ctx: Ctx) => ({
  organizationId: scope.org.id,
  actor: scope.actor,
  requestId: ctx.requestId,
});

export { requireProject };

/** The project and one of its pipelines, or 404 naming what is missing. */
export async function requirePipeline(db: DbOrTx, scope: Scope, projectSlug: string, pipelineSlug: string) {
  const project = await requireProject(db, scope, projectSlug);
  const pipeline = await repo.findPipeline(db, project.id, pipelineSlug);
  if (!pipeline) throw notFound('pipeline');
  return { project, pipeline };
}

/** The same, with the pipeline row locked for the rest of the transaction. */
export async function lockPipelineOf(tx: Tx, projectId: string, pipelineSlug: string) {
  const pipeline = await repo.lockPipeline(tx, projectId, pipelineSlug);
  if (!pipeline) throw notFound('pipeline');
  return pipeline;
}

/**
 * `{pe}` routes: the project and a live environment enabled for it
 * (docs/pipeline-spec.md#versions-validation-and-deployment).
 */
export async function requirePlace(db: DbOrTx, scope: Scope, projectSlug: string, environmentSlug: string) {
  const place = await findProjectEnvironment(db, scope, projectSlug, environmentSlug);
  if (!place) throw notFound('project environment');
  return place;
}

/**
 * The same inside a transaction, with the environment row locked so its `protected` flag cannot
 * change between the confirmation check and the write.
 */
export async function lockPlace(tx: Tx, scope: Scope, projectSlug: string, environmentSlug: string) {
  const place = await requirePlace(tx, scope, projectSlug, environmentSlug);
  const environment = await lockLiveEnvironment(tx, scope, environmentSlug);
  return { ...place, environment };
}

export async function listPipelines(ctx: Ctx, scope: Scope, projectSlug: string, query: ListQuery) {
  const project = await requireProject(ctx.deps.db, scope, projectSlug);
  const page = await repo.listPipelines(ctx.deps.db, project.id, query);
  return { ...page, items: page.items.map((r) => toPipeline(project.slug, r)) };
}

export async function getPipeline(ctx: Ctx, scope: Scope, projectSlug: string, slug: string) {
  const { project, pipeline } = await requirePipeline(ctx.deps.db, scope, projectSlug, slug);
  return toPipeline(project.slug, pipeline);
}

export async function createPipeline(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  input: { name: string; description?: string | null; slug?: string },
) {
  const db = ctx.deps.db;
  const project = await requireProject(db, scope, projectSlug);
  const slug = await chooseSlug(input.slug, input.name, (s) => repo.pipelineSlugTaken(db, project.id, s));
  const row = await db.transaction(async (tx) => {
    if (await repo.pipelineSlugTaken(tx, project.id, slug))
      throw conflict(`a pipeline with slug ${slug} already exists in project ${project.slug}`);
    const created = await repo.insertPipeline(tx, {
      organizationId: scope.org.id,
      projectId: project.id,
      slug,
      name: input.name,
      description: input.description ?? null,
    });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline',
      entitySlug: slug,
      action: 'create',
      metadata: { project_slug: project.slug, name: input.name },
    });
    return created;
  });
  return toPipeline(project.slug, { ...row, latestSpecHash: null });
}

export async function updatePipeline(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  slug: string,
  input: { name?: string; description?: string | null },
) {
  const { project } = await requirePipeline(ctx.deps.db, scope, projectSlug, slug);
  await ctx.deps.db.transaction(async (tx) => {
    const locked = await lockPipelineOf(tx, project.id, slug);
    await repo.updatePipeline(tx, locked.id, input);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline',
      entitySlug: slug,
      action: 'update',
      metadata: { project_slug: project.slug, fields: Object.keys(input) },
    });
  });
  return getPipeline(ctx, scope, projectSlug, slug);
}

/**
 * Deletes the pipeline with its versions, refs, bindings, validations, deployments and finished
 * runs. Refused while a run is queued, running or canceling: it would lose its row mid-flight.
 */
export async function deletePipeline(ctx: Ctx, scope: Scope, projectSlug: string, slug: string) {
  const project = await requireProject(ctx.deps.db, scope, projectSlug);
  await ctx.deps.db.transaction(async (tx) => {
    const locked = await lockPipelineOf(tx, project.id, slug);
    if (await repo.hasLiveRuns(tx, locked.id))
      throw conflict(`pipeline ${slug} has runs in progress; cancel them or let them finish first`);
    // Its deployed cdc steps give up their captures (docs/cdc.md "Slot safety").
    const released = await retireCaptures(tx, ctx.deps, {
      organizationId: scope.org.id,
      pipelineId: locked.id,
      environmentId: null,
      nextSpec: null,
    });
    await repo.deletePipeline(tx, locked.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline',
      entitySlug: slug,
      action: 'delete',
      metadata: { project_slug: project.slug, captures_released: released },
    });
  });
}
