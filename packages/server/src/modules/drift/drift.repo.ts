import { and, asc, desc, eq, inArray, isNull, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import {
  contractRevisions,
  contracts,
  dataSourceBindings,
  dataSourceRefs,
  dataSources,
  driftReports,
  environments,
  latestRevisionOfContract,
  pipelineDeployments,
  pipelineRuns,
  pipelines,
  pipelineVersions,
  projects,
} from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type DriftReportRow = typeof driftReports.$inferSelect;
export type DriftReportView = DriftReportRow & {
  projectSlug: string | null;
  dataSourceSlug: string | null;
  pipelineSlug: string | null;
};

const view = {
  report: driftReports,
  projectSlug: projects.slug,
  dataSourceSlug: dataSources.slug,
  pipelineSlug: pipelines.slug,
};

const flatten = (r: {
  report: DriftReportRow;
  projectSlug: string | null;
  dataSourceSlug: string | null;
  pipelineSlug: string | null;
}): DriftReportView => ({
  ...r.report,
  projectSlug: r.projectSlug,
  dataSourceSlug: r.dataSourceSlug,
  pipelineSlug: r.pipelineSlug,
});

const selectViews = (db: DbOrTx) =>
  db
    .select(view)
    .from(driftReports)
    .leftJoin(projects, eq(projects.id, driftReports.projectId))
    .leftJoin(dataSources, eq(dataSources.id, driftReports.dataSourceId))
    .leftJoin(pipelines, eq(pipelines.id, driftReports.pipelineId));

export async function listReports(db: DbOrTx, filter: SQL, query: ListQuery) {
  return paginate({
    query,
    sorts: { drift_report_created_at: { column: driftReports.createdAt, kind: 'timestamp' } },
    tiebreak: driftReports.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await selectViews(db)
          .where(and(filter, where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map(flatten),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

export const byProject = (projectId: string) => eq(driftReports.projectId, projectId);
export const byDataSource = (dataSourceId: string) => eq(driftReports.dataSourceId, dataSourceId);

export async function findReport(db: DbOrTx, projectId: string, slug: string) {
  const [row] = await selectViews(db).where(
    and(eq(driftReports.projectId, projectId), eq(driftReports.slug, slug)),
  );
  return row ? flatten(row) : null;
}

/** The open report of a subject, locked: one writer supersedes it at a time. */
export async function lockOpenReport(db: DbOrTx, subjectKey: string) {
  const [row] = await db
    .select()
    .from(driftReports)
    .where(and(eq(driftReports.subjectKey, subjectKey), eq(driftReports.status, 'open')))
    .orderBy(asc(driftReports.createdAt))
    .limit(1)
    .for('update');
  return row ?? null;
}

export async function supersede(db: DbOrTx, id: string, at: Date) {
  await db
    .update(driftReports)
    .set({ status: 'superseded', supersededAt: at })
    .where(and(eq(driftReports.id, id), isNull(driftReports.supersededAt)));
}

export async function insertReport(db: DbOrTx, values: typeof driftReports.$inferInsert) {
  const [row] = await db.insert(driftReports).values(values).returning();
  return row;
}

export type BoundPipeline = {
  projectId: string;
  projectSlug: string;
  pipelineId: string;
  pipelineSlug: string;
  environmentId: string;
  environmentSlug: string;
  refSlug: string;
};

/** Every (pipeline, environment, ref) that binds the data source, in any environment. */
export async function bindingsOfDataSource(db: DbOrTx, dataSourceId: string): Promise<BoundPipeline[]> {
  return db
    .select({
      projectId: projects.id,
      projectSlug: projects.slug,
      pipelineId: pipelines.id,
      pipelineSlug: pipelines.slug,
      environmentId: environments.id,
      environmentSlug: environments.slug,
      refSlug: dataSourceRefs.slug,
    })
    .from(dataSourceBindings)
    .innerJoin(dataSourceRefs, eq(dataSourceRefs.id, dataSourceBindings.refId))
    .innerJoin(pipelines, eq(pipelines.id, dataSourceBindings.pipelineId))
    .innerJoin(projects, eq(projects.id, pipelines.projectId))
    .innerJoin(environments, eq(environments.id, dataSourceBindings.environmentId))
    .where(eq(dataSourceBindings.dataSourceId, dataSourceId))
    .orderBy(asc(pipelines.slug), asc(environments.slug));
}

/** The spec an environment runs: its active deployment, else the newest pushed version. */
export async function specInEnvironment(db: DbOrTx, pipelineId: string, environmentId: string) {
  const [deployed] = await db
    .select({ specHash: pipelineVersions.specHash, spec: pipelineVersions.spec })
    .from(pipelineDeployments)
    .innerJoin(
      pipelineVersions,
      and(
        eq(pipelineVersions.pipelineId, pipelineDeployments.pipelineId),
        eq(pipelineVersions.specHash, pipelineDeployments.specHash),
      ),
    )
    .where(
      and(
        eq(pipelineDeployments.pipelineId, pipelineId),
        eq(pipelineDeployments.environmentId, environmentId),
        eq(pipelineDeployments.active, true),
      ),
    )
    .orderBy(desc(pipelineDeployments.createdAt))
    .limit(1);
  if (deployed) return deployed;
  const [latest] = await db
    .select({ specHash: pipelineVersions.specHash, spec: pipelineVersions.spec })
    .from(pipelineVersions)
    .where(eq(pipelineVersions.pipelineId, pipelineId))
    .orderBy(desc(pipelineVersions.createdAt))
    .limit(1);
  return latest ?? null;
}

/** Runs not finished yet: they started (or will start) on the old schema. */
export async function runsInFlight(db: DbOrTx, pipelineId: string, environmentIds: string[]) {
  if (environmentIds.length === 0) return [];
  return db
    .select({ slug: pipelineRuns.slug, state: pipelineRuns.state, environment: environments.slug })
    .from(pipelineRuns)
    .innerJoin(environments, eq(environments.id, pipelineRuns.environmentId))
    .where(
      and(
        eq(pipelineRuns.pipelineId, pipelineId),
        inArray(pipelineRuns.environmentId, environmentIds),
        inArray(pipelineRuns.state, ['queued', 'running', 'canceling']),
      ),
    )
    .orderBy(asc(pipelineRuns.createdAt))
    .limit(50);
}

/** The open report of a subject, read without a lock (the preview). */
export async function findOpenReport(db: DbOrTx, subjectKey: string) {
  const [row] = await db
    .select()
    .from(driftReports)
    .where(and(eq(driftReports.subjectKey, subjectKey), eq(driftReports.status, 'open')))
    .orderBy(asc(driftReports.createdAt))
    .limit(1);
  return row ?? null;
}

/** The baseline of the oldest open `source_schema` report of a data source (any project), or null. */
export async function openBaselineOf(db: DbOrTx, dataSourceId: string) {
  const [row] = await db
    .select({ baseline: driftReports.baseline })
    .from(driftReports)
    .where(
      and(
        eq(driftReports.dataSourceId, dataSourceId),
        eq(driftReports.reportType, 'source_schema'),
        eq(driftReports.status, 'open'),
      ),
    )
    .orderBy(asc(driftReports.createdAt))
    .limit(1);
  return (row?.baseline as Record<string, unknown> | undefined) ?? null;
}

/** The data sources a pipeline binds in one environment, with their stored schemas. */
export async function dataSourcesOfPipeline(db: DbOrTx, pipelineId: string, environmentId: string) {
  const rows = await db
    .select({ dataSourceId: dataSources.id, schema: dataSources.schema, refSlug: dataSourceRefs.slug })
    .from(dataSourceBindings)
    .innerJoin(dataSourceRefs, eq(dataSourceRefs.id, dataSourceBindings.refId))
    .innerJoin(dataSources, eq(dataSources.id, dataSourceBindings.dataSourceId))
    .where(
      and(eq(dataSourceBindings.pipelineId, pipelineId), eq(dataSourceBindings.environmentId, environmentId)),
    );
  return rows;
}

/** Each ref of a pipeline bound in an environment, with the stored schema of its data source. */
export async function refSchemas(db: DbOrTx, pipelineId: string, environmentId: string) {
  return db
    .select({ refSlug: dataSourceRefs.slug, schema: dataSources.schema })
    .from(dataSourceBindings)
    .innerJoin(dataSourceRefs, eq(dataSourceRefs.id, dataSourceBindings.refId))
    .innerJoin(dataSources, eq(dataSources.id, dataSourceBindings.dataSourceId))
    .where(
      and(eq(dataSourceBindings.pipelineId, pipelineId), eq(dataSourceBindings.environmentId, environmentId)),
    );
}

/** Environments where a pipeline has at least one binding. */
export async function environmentsOfPipeline(db: DbOrTx, pipelineId: string) {
  return db
    .selectDistinct({ id: environments.id, slug: environments.slug })
    .from(dataSourceBindings)
    .innerJoin(environments, eq(environments.id, dataSourceBindings.environmentId))
    .where(eq(dataSourceBindings.pipelineId, pipelineId))
    .orderBy(asc(environments.slug));
}

/** The columns of each contract's latest revision on a pipeline, by the sink step it covers. */
export async function contractColumnsOf(db: DbOrTx, pipelineId: string) {
  return db
    .select({ stepSlug: contracts.stepSlug, slug: contracts.slug, columns: contractRevisions.columns })
    .from(contracts)
    .innerJoin(contractRevisions, latestRevisionOfContract)
    .where(eq(contracts.pipelineId, pipelineId));
}
