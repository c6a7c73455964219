import { capabilityOf, connectorFor, optionalCapability } from '@sluice/connectors';
import { and, eq } from 'drizzle-orm';
import type { Ctx, Scope } from '../../context';
import { pipelines, projects } from '../../db/schema/index';
import { AppError, notFound, type ValidationIssue, validationFailed } from '../../http/errors';
import { iso } from '../../http/fields';
import { describeFailure, getRow, loadConnection, src } from '../data-sources/index';

import { recordEvent } from '../events/index';
import * as repo from './proof.repo';
import type { PutSettings } from './proof.schemas';
import { findContractTarget } from './proof-drift';

/** The data source, when its kind can be proven (git, github, gitlab); others are 404. */
export async function provableSource(ctx: Ctx, scope: Scope, slug: string) {
  const row = await getRow(ctx, scope, slug);
  const definition = connectorFor(row.type);
  const proof = capabilityOf(definition, 'proof', () => notFound('proof settings'));
  // Kinds that post checks on commits (github, gitlab); plain git has none to post.
  return { row, proof, checks: optionalCapability(definition, 'checks') };
}

/**
 * A connector failure while talking to the repository: the remote's, not ours, so 502
 * REMOTE_FAILED with the connector's code as detailed_error (503 stays our own store's), as
 * `GET …/branches` answers (docs/api-conventions.md).
 */
export function remoteFailure(err: unknown, what: string): AppError {
  const { failure } = describeFailure(err);
  if (failure.code === 'PRIVATE_HOST_BLOCKED') return new AppError('PRIVATE_HOST_BLOCKED', failure.message);
  return new AppError('REMOTE_FAILED', `${what}: ${failure.message}`, { detailedError: failure.code });
}

function toSettings(dataSourceSlug: string, r: repo.SettingsRow) {
  return {
    data_source_slug: dataSourceSlug,
    enabled: r.enabled,
    publish_checks: r.publishChecks,
    expected_repository_id: r.expectedRepositoryId,
    targets: r.targets,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

/** What is in force before the first PUT: nothing is observed, checked or published. */
const defaultSettings = (dataSourceSlug: string) => ({
  data_source_slug: dataSourceSlug,
  enabled: false,
  publish_checks: false,
  expected_repository_id: null,
  targets: [],
  created_at: null,
  updated_at: null,
});

export async function getSettings(ctx: Ctx, scope: Scope, slug: string) {
  const { row } = await provableSource(ctx, scope, slug);
  const settings = await repo.findSettings(ctx.deps.db, row.id);
  return settings ? toSettings(row.slug, settings) : defaultSettings(row.slug);
}

/** A pipeline target names `pipeline` (unique in the organization) or `project/pipeline`. */
export async function findPipelineTarget(ctx: Ctx, organizationId: string, ref: string) {
  const [projectSlug, pipelineSlug] = ref.includes('/') ? ref.split('/', 2) : [null, ref];
  const rows = await ctx.deps.db
    .select({ id: pipelines.id, slug: pipelines.slug, projectSlug: projects.slug })
    .from(pipelines)
    .innerJoin(projects, eq(projects.id, pipelines.projectId))
    .where(
      and(
        eq(pipelines.organizationId, organizationId),
        eq(pipelines.slug, pipelineSlug),
        projectSlug ? eq(projects.slug, projectSlug) : undefined,
      ),
    );
  return rows;
}

async function checkTargets(ctx: Ctx, scope: Scope, input: PutSettings) {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const [i, t] of input.targets.entries()) {
    const key = `${t.kind}:${t.ref}`;
    if (seen.has(key))
      issues.push({ path: `targets.${i}`, code: 'duplicate', message: `${key} is listed twice` });
    seen.add(key);
    if (t.kind === 'pipeline') {
      const found = await findPipelineTarget(ctx, scope.org.id, t.ref);
      if (found.length === 0)
        issues.push({
          path: `targets.${i}.ref`,
          code: 'not_found',
          message: `pipeline ${t.ref} was not found`,
        });
      if (found.length > 1)
        issues.push({
          path: `targets.${i}.ref`,
          code: 'ambiguous',
          message: `pipeline ${t.ref} exists in several projects; write project/pipeline`,
        });
    }
    if (t.kind === 'contract') {
      const found = await findContractTarget(ctx.deps.db, scope.org.id, t.ref);
      if (found.length !== 1)
        issues.push({
          path: `targets.${i}.ref`,
          code: found.length === 0 ? 'not_found' : 'ambiguous',
          message:
            found.length === 0
              ? `contract ${t.ref} was not found`
              : `contract ${t.ref} exists in several projects; write project/contract`,
        });
    }
    if (t.kind === 'path' && (t.ref.startsWith('/') || t.ref.split('/').includes('..')))
      issues.push({
        path: `targets.${i}.ref`,
        code: 'invalid_path',
        message: 'a path is relative and has no ..',
      });
  }
  if (issues.length > 0) throw validationFailed(issues);
}

export async function putSettings(ctx: Ctx, scope: Scope, slug: string, input: PutSettings) {
  const { row, proof } = await provableSource(ctx, scope, slug);
  await checkTargets(ctx, scope, input);
  if (input.enabled) {
    // The live repository must be the one named: a renamed, transferred or forked repository
    // must not receive checks meant for another.
    const loaded = await loadConnection(ctx.deps.db, ctx.deps, row);
    let live: string;
    try {
      live = await proof.repositoryId(loaded.connection, loaded.ctx);
    } catch (err) {
      throw remoteFailure(err, 'the repository id could not be read');
    }
    if (live !== input.expected_repository_id)
      throw new AppError(
        'REPOSITORY_MISMATCH',
        `expected_repository_id ${input.expected_repository_id} does not match the repository (${live})`,
      );
  }
  const { row: saved, created } = await ctx.deps.db.transaction(async (tx) => {
    const out = await repo.upsertSettings(tx, {
      organizationId: scope.org.id,
      dataSourceId: row.id,
      enabled: input.enabled,
      publishChecks: input.publish_checks,
      expectedRepositoryId: input.expected_repository_id,
      targets: input.targets,
    });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: row.slug,
      action: input.enabled ? 'enable' : 'update',
      metadata: {
        proof_settings: out.created ? 'created' : 'replaced',
        enabled: input.enabled,
        targets: input.targets.length,
      },
    });
    return out;
  });
  return { settings: toSettings(row.slug, saved), created };
}
