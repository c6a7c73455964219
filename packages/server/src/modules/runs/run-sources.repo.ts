import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import {
  dataSourceBindings,
  dataSourceCredentials,
  dataSourceRefs,
  dataSources,
  pipelineVersions,
} from '../../db/schema/index';
import { type CredentialRow, isCurrentCredentialOf } from '../data-sources/data-sources.repo';
import { resetStepsSql } from './run-progress.repo';

// What a worker reads to run a run: the spec it was queued with, and the data sources its refs
// are bound to in the run's environment.

export type DataSourceRow = typeof dataSources.$inferSelect;

/** The stored spec of a pipeline version (the one the run was queued with), or null. */
export async function versionSpec(db: DbOrTx, pipelineId: string, specHash: string) {
  const [row] = await db
    .select({ spec: pipelineVersions.spec })
    .from(pipelineVersions)
    .where(and(eq(pipelineVersions.pipelineId, pipelineId), eq(pipelineVersions.specHash, specHash)))
    .limit(1);
  return row?.spec ?? null;
}

export type BoundDataSource = DataSourceRow & {
  /** Its current credential, read with it (null: none). */
  currentCredential: CredentialRow | null;
};

/**
 * `{ref slug: data source row}` of the pipeline's refs bound in the environment, each with its
 * current credential: one read for every connection a run opens. With `steps`, the same
 * statement resets the attempt's steps (resetStepsSql): one round trip to start an attempt.
 */
export async function boundDataSources(
  db: DbOrTx,
  pipelineId: string,
  environmentId: string,
  steps?: { runId: string; order: string[] },
): Promise<Map<string, BoundDataSource>> {
  const reset = steps ? resetStepsSql(steps.runId, steps.order) : null;
  const ctes = reset ? [db.$with('gone', {}).as(reset.gone), db.$with('reset', {}).as(reset.reset)] : [];
  const rows = await db
    .with(...ctes)
    .select({ refSlug: dataSourceRefs.slug, dataSource: dataSources, credential: dataSourceCredentials })
    .from(dataSourceBindings)
    .innerJoin(dataSourceRefs, eq(dataSourceRefs.id, dataSourceBindings.refId))
    .innerJoin(dataSources, eq(dataSources.id, dataSourceBindings.dataSourceId))
    .leftJoin(dataSourceCredentials, isCurrentCredentialOf(dataSources.id))
    .where(
      and(eq(dataSourceBindings.pipelineId, pipelineId), eq(dataSourceBindings.environmentId, environmentId)),
    );
  return new Map(rows.map((r) => [r.refSlug, { ...r.dataSource, currentCredential: r.credential }]));
}
