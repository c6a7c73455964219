import { and, eq, getTableColumns, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import {
  dataSourceBindings,
  dataSourceCredentials,
  dataSourceRefs,
  dataSources,
  pipelineVersions,
} from '../../db/schema/index';
import { type CredentialRow, isCurrentCredentialOf } from '../data-sources/index';
import { resetStepsSql } from './run-progress.repo';

// What a worker reads to run a run: the spec it was queued with, and the data sources its refs
// are bound to in the run's environment.

export type DataSourceRow = typeof dataSources.$inferSelect;

/**
 * boundDataSources of the run row `r` (SQL naming a pipeline_runs row), as one jsonb value for a
 * statement that does more (the claim): `[{ref, source, credential}]` with the rows as to_jsonb.
 */
export function boundJsonSql(r: SQL): SQL {
  return sql`(
    select coalesce(jsonb_agg(jsonb_build_object('ref', ref.slug, 'source', to_jsonb(ds), 'credential', to_jsonb(data_source_credentials))), '[]'::jsonb)
      from data_source_bindings b
      join data_source_refs ref on ref.id = b.ref_id
      join data_sources ds on ds.id = b.data_source_id
      left join data_source_credentials on ${isCurrentCredentialOf(sql.raw('ds.id'))}
     where b.pipeline_id = ${r}.pipeline_id and b.environment_id = ${r}.environment_id)`;
}

/** A row of `table` from its to_jsonb (column names, driver values) as a select would map it. */
function rowFromJson<T>(
  table: typeof dataSources | typeof dataSourceCredentials,
  json: Record<string, unknown>,
): T {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = json[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as T;
}

/** boundJsonSql's value as boundDataSources returns it. */
export function boundFromJson(json: unknown): Map<string, BoundDataSource> {
  type Item = { ref: string; source: Record<string, unknown>; credential: Record<string, unknown> | null };
  return new Map(
    (json as Item[]).map((item) => [
      item.ref,
      {
        ...rowFromJson<DataSourceRow>(dataSources, item.source),
        currentCredential: item.credential
          ? rowFromJson<CredentialRow>(dataSourceCredentials, item.credential)
          : null,
      },
    ]),
  );
}

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
