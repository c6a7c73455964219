import type { Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { conflict, notFound } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { recordEvent } from '../events/index';
import * as repo from './projects.repo';

export function toProject(r: repo.ProjectRow) {
  return {
    slug: r.slug,
    name: r.name,
    description: r.description,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export const eventSource = (scope: Scope, ctx: Ctx) => ({
  organizationId: scope.org.id,
  actor: scope.actor,
  requestId: ctx.requestId,
});

export async function listProjects(ctx: Ctx, scope: Scope, query: ListQuery) {
  const page = await repo.listProjects(ctx.deps.db, scope.org.id, query);
  return { ...page, items: page.items.map(toProject) };
}

/** A project of the scope's organization; 404 otherwise. */
export async function requireProject(db: DbOrTx, scope: Scope, slug: string): Promise<repo.ProjectRow> {
  const row = await repo.findProject(db, scope.org.id, slug);
  if (!row) throw notFound('project');
  return row;
}

export async function getProject(ctx: Ctx, scope: Scope, slug: string) {
  return toProject(await requireProject(ctx.deps.db, scope, slug));
}

export async function createProject(
  ctx: Ctx,
  scope: Scope,
  input: { name: string; description?: string | null; slug?: string },
) {
  const db = ctx.deps.db;
  const slug = await chooseSlug(input.slug, input.name, (s) => repo.projectSlugTaken(db, scope.org.id, s));
  const row = await db.transaction(async (tx) => {
    if (await repo.projectSlugTaken(tx, scope.org.id, slug))
      throw conflict(`a project with slug ${slug} already exists`);
    const created = await repo.insertProject(tx, {
      organizationId: scope.org.id,
      slug,
      name: input.name,
      description: input.description ?? null,
    });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'project',
      entitySlug: slug,
      action: 'create',
      metadata: { name: input.name },
    });
    return created;
  });
  return toProject(row);
}

export async function updateProject(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  input: { name?: string; description?: string | null },
) {
  const row = await ctx.deps.db.transaction(async (tx) => {
    const found = await repo.findProject(tx, scope.org.id, slug);
    if (!found) throw notFound('project');
    const updated = await repo.updateProject(tx, found.id, input);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'project',
      entitySlug: slug,
      action: 'update',
      metadata: { fields: Object.keys(input) },
    });
    return updated;
  });
  return toProject(row);
}

/** Deletes the project and its environment links; the environments themselves stay. */
export async function deleteProject(ctx: Ctx, scope: Scope, slug: string) {
  await ctx.deps.db.transaction(async (tx) => {
    const found = await repo.findProject(tx, scope.org.id, slug);
    if (!found) throw notFound('project');
    await repo.deleteProject(tx, found.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'project',
      entitySlug: slug,
      action: 'delete',
    });
  });
}
