import type { Ctx, Scope } from '../../context';
import type { Tx } from '../../db/client';
import { notFound } from '../../http/errors';
import type { ListQuery } from '../../http/pagination';
import {
  assertProtectedConfirmation,
  eventSource,
  lockEnvironmentRow,
  lockLiveEnvironment,
  toEnvironment,
} from '../environments/index';

import { recordEvent } from '../events/index';
import * as repo from './project-environments.repo';
import { findProject, lockProject } from './projects.repo';

export function toProjectEnvironment(r: repo.ProjectEnvironmentRow) {
  return { ...toEnvironment(r), is_default: r.isDefault };
}

async function requireLockedProject(tx: Tx, scope: Scope, slug: string) {
  // Locked so two concurrent "make default" requests cannot leave two defaults.
  const project = await lockProject(tx, scope.org.id, slug);
  if (!project) throw notFound('project');
  return project;
}

export async function listProjectEnvironments(ctx: Ctx, scope: Scope, projectSlug: string, query: ListQuery) {
  const project = await findProject(ctx.deps.db, scope.org.id, projectSlug);
  if (!project) throw notFound('project');
  const page = await repo.listProjectEnvironments(ctx.deps.db, project.id, query);
  return { ...page, items: page.items.map(toProjectEnvironment) };
}

export async function enableEnvironment(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  environmentSlug: string,
  isDefault: boolean,
  confirmation: string | null,
) {
  return ctx.deps.db.transaction(async (tx) => {
    const project = await requireLockedProject(tx, scope, projectSlug);
    const env = await lockLiveEnvironment(tx, scope, environmentSlug);
    assertProtectedConfirmation(env, confirmation);
    const result = await repo.upsertLink(tx, project.id, env.id, isDefault);
    if (result.changed) {
      await recordEvent(tx, eventSource(scope, ctx), {
        entityType: 'project_environment',
        entitySlug: env.slug,
        action: result.created ? 'enable' : 'update',
        metadata: { project_slug: project.slug, environment_slug: env.slug, is_default: isDefault },
      });
    }
    return { created: result.created, item: toProjectEnvironment({ ...env, isDefault }) };
  });
}

export async function disableEnvironment(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  environmentSlug: string,
  confirmation: string | null,
) {
  await ctx.deps.db.transaction(async (tx) => {
    const project = await requireLockedProject(tx, scope, projectSlug);
    // A soft-deleted environment can still be unlinked.
    const env = await lockEnvironmentRow(tx, scope, environmentSlug);
    const link = await repo.findLink(tx, project.id, env.id);
    if (!link) throw notFound('project environment');
    assertProtectedConfirmation(env, confirmation);
    await repo.deleteLink(tx, link.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'project_environment',
      entitySlug: env.slug,
      action: 'disable',
      metadata: { project_slug: project.slug, environment_slug: env.slug },
    });
  });
}

/** For environment-aware routes of later modules: the project and a live environment enabled for it. */
export async function findProjectEnvironment(
  db: Parameters<typeof findProject>[0],
  scope: Scope,
  projectSlug: string,
  environmentSlug: string,
) {
  return repo.findProjectEnvironmentRows(db, scope.org.id, projectSlug, environmentSlug);
}
