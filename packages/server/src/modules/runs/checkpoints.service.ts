import type { Ctx, Scope } from '../../context';
import { notFound } from '../../http/errors';
import { iso } from '../../http/fields';
import { onePage } from '../../http/pagination';
import { assertProtectedConfirmation, eventSource, lockLiveEnvironment } from '../environments/index';

import { recordEvent } from '../events/index';
import { type CheckpointRow, deleteCheckpoints, listCheckpoints } from './run-progress.repo';
import * as repo from './runs.repo';
import { type PeSlugs, resolvePlace } from './runs.service';

export function toCheckpoint(c: CheckpointRow) {
  return { step_slug: c.stepSlug, cursor: c.cursor, run_slug: c.runSlug, updated_at: iso(c.updatedAt) };
}

type PipelinePe = PeSlugs & { pipeline: string };

export async function getCheckpoints(ctx: Ctx, scope: Scope, pe: PipelinePe) {
  const db = ctx.deps.db;
  const { place } = await resolvePlace(db, scope, pe.project, pe.environment);
  const pipeline = await repo.findPipeline(db, place.projectId, pe.pipeline);
  if (!pipeline) throw notFound('pipeline');
  const rows = await listCheckpoints(db, pipeline.id, place.environmentId);
  return { checkpoints: rows.map(toCheckpoint), ...onePage };
}

/**
 * Forgets every cursor of the pipeline in the environment: the next run reads from the start.
 * A run in flight may still commit its own cursors when it succeeds.
 */
export async function resetCheckpoints(ctx: Ctx, scope: Scope, pe: PipelinePe, confirmation: string | null) {
  await ctx.deps.db.transaction(async (tx) => {
    const { place } = await resolvePlace(tx, scope, pe.project, pe.environment);
    const pipeline = await repo.findPipeline(tx, place.projectId, pe.pipeline);
    if (!pipeline) throw notFound('pipeline');
    const env = await lockLiveEnvironment(tx, scope, pe.environment);
    assertProtectedConfirmation(env, confirmation);
    const removed = await deleteCheckpoints(tx, pipeline.id, place.environmentId);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_checkpoint',
      entitySlug: pipeline.slug,
      action: 'delete',
      metadata: { pipeline_slug: pipeline.slug, environment_slug: env.slug, steps_reset: removed },
    });
  });
}
