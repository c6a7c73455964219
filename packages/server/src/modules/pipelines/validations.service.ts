import { type Finding, pipelineSpecSchema, specHash } from '@sluice/engine';
import type { Ctx, Scope } from '../../context';
import { notFound } from '../../http/errors';
import { iso, randomSlug } from '../../http/fields';
import { recordEvent } from '../events/index';
import { findPipeline } from './pipelines.repo';
import { eventSource, requirePlace } from './pipelines.service';
import { checkSpec, type SpecCheck, schemaFindings } from './validations.checks';
import * as repo from './validations.repo';
import { resolveVersion } from './versions.service';

export function toValidation(pipelineSlug: string, environmentSlug: string, r: repo.ValidationRow) {
  return {
    slug: r.slug,
    pipeline_slug: pipelineSlug,
    environment_slug: environmentSlug,
    spec_hash: r.specHash,
    valid: r.valid,
    findings: r.findings,
    created_at: iso(r.createdAt),
  };
}

/** The validateBody union: exactly one of spec_hash and spec (the schema enforces it). */
type ValidateInput = { pipeline_slug: string; spec_hash?: string; spec?: Record<string, unknown> };

/**
 * Checks a pushed version (spec_hash) or a draft (spec) against one environment and stores the
 * outcome. The checks read outside any transaction (they parse SQL); only the record is written.
 */
export async function validate(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  environmentSlug: string,
  input: ValidateInput,
  moreChecks: readonly SpecCheck[],
) {
  const db = ctx.deps.db;
  const place = await requirePlace(db, scope, projectSlug, environmentSlug);
  const pipeline = await findPipeline(db, place.project.id, input.pipeline_slug);
  if (!pipeline) throw notFound('pipeline');

  let hash: string;
  let document: unknown;
  if (input.spec_hash !== undefined) {
    const version = await resolveVersion(db, pipeline.id, input.spec_hash);
    hash = version.specHash;
    document = version.spec;
  } else {
    document = input.spec;
    hash = '';
  }
  const parsed = pipelineSpecSchema.safeParse(document);
  let findings: Finding[];
  if (parsed.success) {
    hash ||= specHash(parsed.data);
    findings = await checkSpec(
      db,
      { organizationId: scope.org.id, pipelineId: pipeline.id, environmentId: place.environment.id },
      parsed.data,
      moreChecks,
      ctx.deps,
    );
  } else {
    hash ||= specHash(document);
    findings = schemaFindings(parsed.error);
  }
  const valid = !findings.some((f) => f.severity === 'error');

  const row = await db.transaction(async (tx) => {
    const created = await repo.insertValidation(tx, {
      organizationId: scope.org.id,
      pipelineId: pipeline.id,
      environmentId: place.environment.id,
      slug: randomSlug('val'),
      specHash: hash,
      valid,
      findings,
    });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_version',
      entitySlug: hash,
      action: 'execute',
      metadata: {
        operation: 'validate',
        validation_slug: created.slug,
        project_slug: place.project.slug,
        pipeline_slug: pipeline.slug,
        environment_slug: place.environment.slug,
        draft: input.spec !== undefined,
        valid,
        finding_codes: [...new Set(findings.map((f) => f.code))],
      },
    });
    return created;
  });
  return toValidation(pipeline.slug, place.environment.slug, row);
}

export async function getValidation(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  environmentSlug: string,
  slug: string,
) {
  const place = await requirePlace(ctx.deps.db, scope, projectSlug, environmentSlug);
  const found = await repo.findValidation(ctx.deps.db, place.project.id, place.environment.id, slug);
  if (!found) throw notFound('pipeline validation');
  return toValidation(found.pipelineSlug, place.environment.slug, found.validation);
}
