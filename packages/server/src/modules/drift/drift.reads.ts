import type { DbOrTx } from '../../db/client';
import * as repo from './drift.repo';

// The reads of the impact walk that the contracts module shares (it walks the same pipelines
// against a contract): the environments a pipeline is bound in, the spec each runs and the
// imported schemas of its bound data sources.

export function environmentsOfPipeline(db: DbOrTx, pipelineId: string) {
  return repo.environmentsOfPipeline(db, pipelineId);
}

export function specInEnvironment(db: DbOrTx, pipelineId: string, environmentId: string) {
  return repo.specInEnvironment(db, pipelineId, environmentId);
}

export function refSchemas(db: DbOrTx, pipelineId: string, environmentId: string) {
  return repo.refSchemas(db, pipelineId, environmentId);
}
