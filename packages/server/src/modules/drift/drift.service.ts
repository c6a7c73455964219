import { pipelineSpecSchema, specHash } from '@sluice/engine';
import type { Ctx, Scope } from '../../context';
import type { DbOrTx, Tx } from '../../db/client';
import { notFound, validationFailed } from '../../http/errors';
import { iso, isoOrNull } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { requireDataSourceRow } from '../data-sources/index';
import { requirePipeline, requirePlace, requireProject, resolveVersion } from '../pipelines/index';

import * as repo from './drift.repo';
import { computeReport, type ReportBody } from './report';
import { type DriftDeps, writeReport } from './report-writer';
import { type Draft, targetsOfDataSource } from './targets';

export function toReport(r: repo.DriftReportView) {
  return {
    slug: r.slug,
    report_type: r.reportType as 'source_schema' | 'contract_impact',
    status: r.status as 'open' | 'superseded',
    severity: r.severity as ReportBody['severity'],
    summary: r.summary,
    changes: r.changes,
    impacts: r.impacts,
    project_slug: r.projectSlug,
    ...(r.pipelineSlug ? { pipeline_slug: r.pipelineSlug } : {}),
    ...(r.dataSourceSlug ? { data_source_slug: r.dataSourceSlug } : {}),
    created_at: iso(r.createdAt),
    superseded_at: isoOrNull(r.supersededAt),
  };
}

const hasSchema = (doc: unknown) =>
  !!doc && typeof doc === 'object' && typeof (doc as { schema_type?: unknown }).schema_type === 'string';
const subjectOf = (dataSourceId: string, projectId: string | null) =>
  `ds:${dataSourceId}:${projectId ?? 'none'}`;

/**
 * Called by the schema import job, in the transaction that stores the new schema: one
 * `source_schema` report per project whose pipelines bind the data source (one without a
 * project when none does), diffed against the open report's baseline or the previous schema.
 */
export async function recordSourceSchemaReports(
  tx: Tx,
  deps: DriftDeps,
  ds: { id: string; organizationId: string; slug: string },
  previous: Record<string, unknown>,
  next: Record<string, unknown>,
) {
  const projects = await targetsOfDataSource(tx, ds.id);
  const subjects = projects.length > 0 ? projects : [{ projectId: null, projectSlug: null, targets: [] }];
  for (const p of subjects) {
    const subject = {
      organizationId: ds.organizationId,
      projectId: p.projectId,
      reportType: 'source_schema' as const,
      subjectKey: subjectOf(ds.id, p.projectId),
      dataSourceId: ds.id,
      projectSlug: p.projectSlug,
      subject: { kind: 'data_source' as const, slug: ds.slug },
    };
    const open = await repo.lockOpenReport(tx, subject.subjectKey);
    const baseline = open?.baseline ?? previous;
    // A first import has nothing to compare with.
    if (!hasSchema(baseline)) continue;
    const body = await computeReport(baseline, next, p.targets);
    await writeReport(tx, deps, subject, baseline, body);
  }
}

export async function listProjectReports(ctx: Ctx, scope: Scope, projectSlug: string, query: ListQuery) {
  const { project } = await requireProjectOnly(ctx.deps.db, scope, projectSlug);
  const page = await repo.listReports(ctx.deps.db, repo.byProject(project.id), query);
  return { ...page, items: page.items.map(toReport) };
}

export async function listDataSourceReports(
  ctx: Ctx,
  scope: Scope,
  dataSourceSlug: string,
  query: ListQuery,
) {
  const ds = await requireDataSourceRow(ctx.deps.db, scope, dataSourceSlug);
  const page = await repo.listReports(ctx.deps.db, repo.byDataSource(ds.id), query);
  return { ...page, items: page.items.map(toReport) };
}

export async function getProjectReport(ctx: Ctx, scope: Scope, projectSlug: string, slug: string) {
  const { project } = await requireProjectOnly(ctx.deps.db, scope, projectSlug);
  const found = await repo.findReport(ctx.deps.db, project.id, slug);
  if (!found) throw notFound('drift report');
  return toReport(found);
}

async function requireProjectOnly(db: DbOrTx, scope: Scope, projectSlug: string) {
  return { project: await requireProject(db, scope, projectSlug) };
}

export type PreviewInput = {
  environment_slug: string;
  spec_hash?: string;
  spec?: Record<string, unknown>;
  data_source_slug?: string;
  schema?: Record<string, unknown>;
};

/**
 * The report an import of `schema` would write for this pipeline's project (or the open drift
 * of the data source under a draft spec), computed the same way and stored nowhere.
 */
export async function previewDrift(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  pipelineSlug: string,
  input: PreviewInput,
) {
  if (input.spec_hash !== undefined && input.spec !== undefined)
    throw validationFailed([
      { path: 'spec', code: 'exactly_one', message: 'send at most one of spec_hash and spec' },
    ]);
  const db = ctx.deps.db;
  const { project, pipeline } = await requirePipeline(db, scope, projectSlug, pipelineSlug);
  const place = await requirePlace(db, scope, projectSlug, input.environment_slug);

  let draft: Draft | undefined;
  if (input.spec !== undefined) {
    const parsed = pipelineSpecSchema.safeParse(input.spec);
    if (!parsed.success)
      throw validationFailed(
        parsed.error.issues.map((i) => ({
          path: `spec.${i.path.join('.')}`,
          code: 'invalid',
          message: i.message,
        })),
      );
    draft = {
      pipelineId: pipeline.id,
      environmentId: place.environment.id,
      specHash: specHash(parsed.data),
      spec: parsed.data,
    };
  } else if (input.spec_hash !== undefined) {
    const v = await resolveVersion(db, pipeline.id, input.spec_hash);
    draft = {
      pipelineId: pipeline.id,
      environmentId: place.environment.id,
      specHash: v.specHash,
      spec: v.spec,
    };
  }

  // Without data_source_slug: the one data source the spec's source steps read.
  const current = draft ?? (await repo.specInEnvironment(db, pipeline.id, place.environment.id));
  const parsedSpec = pipelineSpecSchema.safeParse(current?.spec);
  const sourceRefs = new Set(
    parsedSpec.success
      ? parsedSpec.data.steps.filter((s) => s.kind === 'source').map((s) => s.data_source_ref)
      : [],
  );
  const bound = [
    ...new Map(
      (await repo.dataSourcesOfPipeline(db, pipeline.id, place.environment.id))
        .filter((b) => sourceRefs.has(b.refSlug))
        .map((b) => [b.dataSourceId, b]),
    ).values(),
  ];
  let dataSourceId: string;
  let stored: Record<string, unknown>;
  if (input.data_source_slug) {
    const ds = await requireDataSourceRow(db, scope, input.data_source_slug);
    dataSourceId = ds.id;
    stored = ds.schema;
  } else {
    if (bound.length !== 1)
      throw validationFailed([
        {
          path: 'data_source_slug',
          code: 'required',
          message:
            bound.length === 0
              ? 'no source step of the pipeline reads a data source bound in this environment; name one with data_source_slug'
              : 'the source steps of the pipeline read several data sources in this environment; name one with data_source_slug',
        },
      ]);
    dataSourceId = bound[0].dataSourceId;
    stored = bound[0].schema;
  }
  const projects = await targetsOfDataSource(db, dataSourceId, draft);
  const targets = projects.find((p) => p.projectId === project.id)?.targets ?? [];
  const open = await repo.findOpenReport(db, subjectOf(dataSourceId, targets.length > 0 ? project.id : null));
  const baseline = open?.baseline ?? stored;
  const candidate = input.schema ?? stored;
  if (!hasSchema(baseline) || !hasSchema(candidate)) return computeReport({}, {}, []);
  return computeReport(baseline, candidate, targets);
}
