import type { Scope } from '../../context';
import type { DbOrTx, Tx } from '../../db/client';
import { notFound } from '../../http/errors';
import { lockPipelineOf, lockPlace, requirePipeline, requirePlace } from '../pipelines/index';
import type { TriggerNames } from './triggers.present';
import type * as repo from './triggers.repo';
import { findTrigger } from './triggers.repo';

// Where a trigger lives (project, environment, pipeline) and the trigger itself, looked up for the
// service and for the secret and ledger operations beside it.

export type TriggerPe = { project: string; environment: string; pipeline: string };

export async function resolve(db: DbOrTx, scope: Scope, pe: TriggerPe) {
  const place = await requirePlace(db, scope, pe.project, pe.environment);
  const { pipeline } = await requirePipeline(db, scope, pe.project, pe.pipeline);
  const tp: repo.TriggerPlace = {
    organizationId: scope.org.id,
    pipelineId: pipeline.id,
    environmentId: place.environment.id,
  };
  const names: TriggerNames = { pipelineSlug: pipeline.slug, environmentSlug: place.environment.slug };
  return { tp, names, environment: place.environment };
}

/** The same inside a transaction, with the environment and pipeline rows locked. */
export async function lockResolve(tx: Tx, scope: Scope, pe: TriggerPe) {
  const place = await lockPlace(tx, scope, pe.project, pe.environment);
  const pipeline = await lockPipelineOf(tx, place.project.id, pe.pipeline);
  if (!pipeline) throw notFound('pipeline');
  const tp: repo.TriggerPlace = {
    organizationId: scope.org.id,
    pipelineId: pipeline.id,
    environmentId: place.environment.id,
  };
  return {
    tp,
    names: { pipelineSlug: pipeline.slug, environmentSlug: place.environment.slug },
    environment: place.environment,
  };
}

export async function requireTrigger(db: DbOrTx, tp: repo.TriggerPlace, slug: string, lock = false) {
  const row = await findTrigger(db, tp, slug, lock);
  if (!row) throw notFound('pipeline trigger');
  return row;
}
