import { deriveRefs, type PipelineSpec, specHash } from '@sluice/engine';
import type { Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { recordEvent } from '../events/index';
import { touchPipeline } from './pipelines.repo';
import { eventSource, lockPipelineOf, requirePipeline, requireProject } from './pipelines.service';
import { syncRefs } from './refs.service';
import * as repo from './versions.repo';

/** Any unique prefix of 7+ characters addresses a version (docs/pipeline-spec.md#versions). */
export const MIN_PREFIX = 7;

export function toVersion(r: repo.VersionRow) {
  return { spec_hash: r.specHash, spec: r.spec, created_at: iso(r.createdAt) };
}

/**
 * The version a full hash or a unique prefix names: 400 under 7 characters, 404 when nothing
 * matches, 409 when the prefix fits several versions.
 */
export async function resolveVersion(
  db: DbOrTx,
  pipelineId: string,
  hashOrPrefix: string,
  field = 'spec_hash',
): Promise<repo.VersionRow> {
  const wanted = hashOrPrefix.toLowerCase();
  if (wanted.length < MIN_PREFIX)
    throw validationFailed([
      {
        path: field,
        code: 'too_short',
        message: `a spec hash prefix needs at least ${MIN_PREFIX} characters`,
      },
    ]);
  if (!/^[0-9a-f]+$/.test(wanted) || wanted.length > 64) throw notFound('pipeline version');
  const matches =
    wanted.length === 64
      ? [await repo.findVersion(db, pipelineId, wanted)].filter((v) => v !== null)
      : await repo.versionsByPrefix(db, pipelineId, wanted);
  if (matches.length === 0) throw notFound('pipeline version');
  if (matches.length > 1)
    throw conflict(`spec hash prefix ${wanted} matches several versions; send more characters`);
  return matches[0];
}

export async function listVersions(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  pipelineSlug: string,
  query: ListQuery,
) {
  const { pipeline } = await requirePipeline(ctx.deps.db, scope, projectSlug, pipelineSlug);
  const page = await repo.listVersions(ctx.deps.db, pipeline.id, query);
  return { ...page, items: page.items.map(toVersion) };
}

export async function getVersion(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  pipelineSlug: string,
  hashOrPrefix: string,
) {
  const { pipeline } = await requirePipeline(ctx.deps.db, scope, projectSlug, pipelineSlug);
  return toVersion(await resolveVersion(ctx.deps.db, pipeline.id, hashOrPrefix));
}

/**
 * Stores a parsed spec as a version; an identical spec (same hash) returns the existing version
 * with `created: false`. A new version becomes the newest and re-derives the pipeline's refs.
 */
export async function pushVersion(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  pipelineSlug: string,
  spec: PipelineSpec,
) {
  const project = await requireProject(ctx.deps.db, scope, projectSlug);
  const hash = specHash(spec);
  // The spec must survive a JSON round trip unchanged: what is stored is what the hash covers.
  const stored = JSON.parse(JSON.stringify(spec)) as Record<string, unknown>;
  // Only the schema gates a push; everything else is a finding of validation (a version is
  // like a commit: problems are reported against it, not refused).
  const { refs } = deriveRefs(spec);
  return ctx.deps.db.transaction(async (tx) => {
    // Locked: concurrent pushes of one pipeline derive its refs one after the other.
    const pipeline = await lockPipelineOf(tx, project.id, pipelineSlug);
    const existing = await repo.findVersion(tx, pipeline.id, hash);
    if (existing) return { created: false, version: toVersion(existing) };
    const row = await repo.insertVersion(tx, {
      organizationId: scope.org.id,
      pipelineId: pipeline.id,
      specHash: hash,
      spec: stored,
      createdByActorType: scope.actor.type,
      createdByActorSlug: scope.actor.slug,
    });
    if (!row) throw new AppError('INTERNAL', 'the version could not be stored');
    const changes = await syncRefs(tx, scope.org.id, pipeline.id, refs);
    await touchPipeline(tx, pipeline.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_version',
      entitySlug: hash,
      action: 'create',
      metadata: {
        project_slug: project.slug,
        pipeline_slug: pipeline.slug,
        spec_hash: hash,
        refs_created: changes.created,
        refs_updated: changes.updated,
        refs_removed: changes.removed,
      },
    });
    return { created: true, version: toVersion(row) };
  });
}
