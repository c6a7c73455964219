import { pipelineSpecSchema } from '@sluice/engine';
import type { Ctx, Scope } from '../../context';
import type { DbOrTx, Tx } from '../../db/client';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { recordEvent } from '../events/index';
import { eventSource, requirePipeline, requireProject, resolveVersion } from '../pipelines/index';

import { contractImpactReports } from './contract-impact';
import { diffRevisions, type RevisionContent, revisionDigest, toOdcs } from './contract-rules';
import * as repo from './contracts.repo';
import type { CreateContractInput, CreateRevisionInput } from './contracts.schemas';

export function toContract(c: repo.ContractView) {
  return {
    slug: c.slug,
    name: c.name,
    description: c.description,
    target: { pipeline_slug: c.pipelineSlug, step_slug: c.stepSlug },
    latest_revision_slug: c.latestRevisionSlug,
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}

export function toRevision(r: repo.RevisionRow) {
  return {
    slug: r.slug,
    based_on: r.basedOn,
    compatibility: r.compatibility as 'backward' | 'none',
    columns: r.columns,
    quality: r.quality,
    freshness: r.freshness,
    digest: r.digest,
    created_at: iso(r.createdAt),
  };
}

const contentOf = (r: repo.RevisionRow): RevisionContent => ({
  compatibility: r.compatibility as RevisionContent['compatibility'],
  columns: r.columns,
  quality: r.quality,
  freshness: r.freshness,
});

export async function listContracts(ctx: Ctx, scope: Scope, projectSlug: string, query: ListQuery) {
  const project = await requireProject(ctx.deps.db, scope, projectSlug);
  const page = await repo.listContracts(ctx.deps.db, project.id, query);
  return { ...page, items: page.items.map(toContract) };
}

async function requireContract(ctx: Ctx, scope: Scope, projectSlug: string, slug: string) {
  const project = await requireProject(ctx.deps.db, scope, projectSlug);
  const contract = await repo.findContract(ctx.deps.db, project.id, slug);
  if (!contract) throw notFound('contract');
  return { project, contract };
}

export async function getContract(ctx: Ctx, scope: Scope, projectSlug: string, slug: string) {
  return toContract((await requireContract(ctx, scope, projectSlug, slug)).contract);
}

export async function createContract(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  input: CreateContractInput,
) {
  const db = ctx.deps.db;
  const { project, pipeline } = await requirePipeline(db, scope, projectSlug, input.target.pipeline_slug);
  // When the pipeline has a version, the target must be one of its sinks.
  if (pipeline.latestSpecHash) {
    const v = await resolveVersion(db, pipeline.id, pipeline.latestSpecHash);
    const spec = pipelineSpecSchema.safeParse(v?.spec);
    const step = spec.success ? spec.data.steps.find((s) => s.slug === input.target.step_slug) : undefined;
    if (spec.success && step?.kind !== 'sink')
      throw validationFailed([
        {
          path: 'target.step_slug',
          code: 'not_a_sink',
          message: `step ${input.target.step_slug} is not a sink of pipeline ${pipeline.slug}`,
        },
      ]);
  }
  const slug = await chooseSlug(
    input.slug,
    input.name,
    async (s) => !!(await repo.findContract(db, project.id, s)),
  );
  const row = await db.transaction(async (tx) => {
    if (await repo.findContract(tx, project.id, slug))
      throw conflict(`a contract with slug ${slug} already exists`);
    const created = await repo.insertContract(tx, {
      organizationId: scope.org.id,
      projectId: project.id,
      slug,
      name: input.name,
      description: input.description ?? null,
      pipelineId: pipeline.id,
      stepSlug: input.target.step_slug,
    });
    await recordEvent(tx, eventSource(scope, ctx), {
      // No entity type for contracts: the event is on their pipeline
      // (docs/api-conventions.md#events).
      entityType: 'pipeline',
      entitySlug: pipeline.slug,
      action: 'create',
      metadata: {
        contract_slug: slug,
        project_slug: project.slug,
        pipeline_slug: pipeline.slug,
        step_slug: input.target.step_slug,
      },
    });
    return created;
  });
  return toContract({ ...row, pipelineSlug: pipeline.slug });
}

export async function listRevisions(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  slug: string,
  query: ListQuery,
) {
  const { contract } = await requireContract(ctx, scope, projectSlug, slug);
  const page = await repo.listRevisions(ctx.deps.db, contract.id, query);
  return { ...page, items: page.items.map(toRevision) };
}

export async function getRevision(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  slug: string,
  revisionSlug: string,
  format: 'sluice' | 'odcs',
) {
  const { contract } = await requireContract(ctx, scope, projectSlug, slug);
  const r = await repo.findRevision(ctx.deps.db, contract.id, revisionSlug);
  if (!r) throw notFound('contract revision');
  return format === 'odcs'
    ? toOdcs(contract, { ...contentOf(r), slug: r.slug, digest: r.digest })
    : toRevision(r);
}

/**
 * A new immutable revision. A `backward` revision that breaks the one it is based on is
 * refused (409 naming the breaking changes); `none` accepts it on purpose. The revision's
 * contract_impact reports are written in the same transaction.
 */
export async function createRevision(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  slug: string,
  input: CreateRevisionInput,
) {
  const db = ctx.deps.db;
  const project = await requireProject(db, scope, projectSlug);
  const content: RevisionContent = {
    compatibility: input.compatibility,
    columns: input.columns,
    quality: input.quality,
    freshness: input.freshness,
  };
  return db.transaction(async (tx: Tx) => {
    const contract = await repo.findContract(tx, project.id, slug, true);
    if (!contract) throw notFound('contract');
    const basedOnSlug = input.based_on ?? contract.latestRevisionSlug;
    const based = basedOnSlug ? await repo.findRevision(tx, contract.id, basedOnSlug) : null;
    if (basedOnSlug && !based)
      throw validationFailed([
        { path: 'based_on', code: 'not_found', message: `revision ${basedOnSlug} does not exist` },
      ]);
    const changes = based ? diffRevisions(contentOf(based), content) : [];
    const breaking = changes.filter((c) => c.severity === 'breaking');
    if (breaking.length > 0 && content.compatibility !== 'none')
      throw new AppError(
        'CONFLICT',
        `the revision breaks ${based!.slug}: ${breaking.map((c) => `${c.reason_code} ${c.path}`).join('; ')}; send compatibility "none" to accept a breaking change on purpose`,
        {
          validationErrors: breaking.map((c) => ({
            path: c.path,
            code: c.reason_code,
            message: `${c.kind}: ${c.before ?? '-'} -> ${c.after ?? '-'}`,
          })),
        },
      );
    const revisionSlug = input.slug ?? `r${(await repo.countRevisions(tx, contract.id)) + 1}`;
    if (await repo.findRevision(tx, contract.id, revisionSlug))
      throw conflict(`revision ${revisionSlug} already exists; revisions are immutable`);
    const now = new Date();
    const row = await repo.insertRevision(tx, {
      organizationId: scope.org.id,
      contractId: contract.id,
      slug: revisionSlug,
      basedOn: based?.slug ?? null,
      compatibility: content.compatibility,
      columns: content.columns,
      quality: content.quality,
      freshness: content.freshness,
      digest: revisionDigest(content),
      createdAt: now,
    });
    await repo.setLatestRevision(tx, contract.id, revisionSlug, now);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline',
      entitySlug: contract.pipelineSlug,
      action: 'create',
      metadata: {
        contract_revision_slug: revisionSlug,
        project_slug: project.slug,
        contract_slug: contract.slug,
        based_on: based?.slug ?? null,
        compatibility: content.compatibility,
        breaking_change_count: breaking.length,
      },
    });
    await contractImpactReports(
      tx,
      { ...contract, latestRevisionSlug: revisionSlug },
      row,
      changes,
      scope,
      ctx,
      project.slug,
    );
    return toRevision(row);
  });
}

/** The latest revision of a contract (by id), or null before its first revision. */
export async function latestRevisionOf(db: DbOrTx, contractId: string) {
  const [latest] = await repo.latestContracts(db, repo.byContractId(contractId));
  return latest?.revision ?? null;
}
