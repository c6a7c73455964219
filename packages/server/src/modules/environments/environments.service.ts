import type { Ctx, Scope } from '../../context';
import type { DbOrTx, Tx } from '../../db/client';
import { conflict, notFound } from '../../http/errors';
import { iso, isoOrNull } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { recordEvent } from '../events/index';
import * as repo from './environments.repo';
import type { environmentColors } from './environments.schemas';
import { assertProtectedConfirmation } from './protected';

type Color = (typeof environmentColors)[number];

export function toEnvironment(r: repo.EnvironmentRow) {
  return {
    slug: r.slug,
    name: r.name,
    description: r.description,
    color: r.color as Color,
    protected: r.protected,
    run_timeout_seconds: r.runTimeoutSeconds,
    deleted_at: isoOrNull(r.deletedAt),
    delete_reason: r.deleteReason,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export const eventSource = (scope: Scope, ctx: Ctx) => ({
  organizationId: scope.org.id,
  actor: scope.actor,
  requestId: ctx.requestId,
});

/** An environment of the scope's organization, deleted or not; 404 otherwise. */
export async function requireEnvironment(db: DbOrTx, scope: Scope, slug: string) {
  const row = await repo.findEnvironment(db, scope.org.id, slug);
  if (!row) throw notFound('environment');
  return row;
}

/**
 * Locks an environment that is about to change what runs in it; a soft-deleted one refuses
 * (restore it first) so nothing is configured into an environment on its way out.
 */
export async function lockLiveEnvironment(tx: Tx, scope: Scope, slug: string) {
  const row = await lockEnvironmentRow(tx, scope, slug);
  if (row.deletedAt) throw conflict(`environment ${slug} is deleted; restore it first`);
  return row;
}

export async function listEnvironments(
  ctx: Ctx,
  scope: Scope,
  query: ListQuery & { include_deleted: boolean },
) {
  const page = await repo.listEnvironments(ctx.deps.db, scope.org.id, query);
  return { ...page, items: page.items.map(toEnvironment) };
}

export async function getEnvironment(ctx: Ctx, scope: Scope, slug: string) {
  return toEnvironment(await requireEnvironment(ctx.deps.db, scope, slug));
}

export async function createEnvironment(
  ctx: Ctx,
  scope: Scope,
  input: {
    name: string;
    description?: string | null;
    color: Color;
    protected: boolean;
    run_timeout_seconds?: number | null;
    slug?: string;
  },
) {
  const db = ctx.deps.db;
  const slug = await chooseSlug(input.slug, input.name, (s) =>
    repo.environmentSlugTaken(db, scope.org.id, s),
  );
  const row = await db.transaction(async (tx) => {
    // A soft-deleted environment keeps its slug until it is purged.
    if (await repo.environmentSlugTaken(tx, scope.org.id, slug))
      throw conflict(`an environment with slug ${slug} already exists`);
    const created = await repo.insertEnvironment(tx, {
      organizationId: scope.org.id,
      slug,
      name: input.name,
      description: input.description ?? null,
      color: input.color,
      protected: input.protected,
      runTimeoutSeconds: input.run_timeout_seconds ?? null,
    });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'environment',
      entitySlug: slug,
      action: 'create',
      metadata: { name: input.name, color: input.color, protected: input.protected },
    });
    return created;
  });
  return toEnvironment(row);
}

export type UpdateEnvironmentInput = {
  name?: string;
  description?: string | null;
  color?: Color;
  protected?: boolean;
  run_timeout_seconds?: number | null;
  protected_environment_confirmation?: string | null;
};

export async function updateEnvironment(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  input: UpdateEnvironmentInput,
  confirmation: string | null,
) {
  const { protected_environment_confirmation: _, ...fields } = input;
  const row = await ctx.deps.db.transaction(async (tx) => {
    const env = await lockLiveEnvironment(tx, scope, slug);
    const protectionChanges = fields.protected !== undefined && fields.protected !== env.protected;
    // Unprotecting needs the confirmation; protecting an unprotected one passes by definition.
    if (protectionChanges) assertProtectedConfirmation(env, confirmation);
    const { run_timeout_seconds, ...rest } = fields;
    const updated = await repo.updateEnvironment(tx, env.id, {
      ...rest,
      ...(run_timeout_seconds !== undefined ? { runTimeoutSeconds: run_timeout_seconds } : {}),
    });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'environment',
      entitySlug: slug,
      action: 'update',
      security: protectionChanges,
      metadata: {
        fields: Object.keys(fields),
        ...(protectionChanges ? { protected: fields.protected } : {}),
      },
    });
    return updated;
  });
  return toEnvironment(row);
}

/** Soft delete: hidden from the default list, still readable, restorable until purged. */
export async function deleteEnvironment(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  reason: string | null,
  confirmation: string | null,
) {
  await ctx.deps.db.transaction(async (tx) => {
    const env = await repo.lockEnvironment(tx, scope.org.id, slug);
    if (!env) throw notFound('environment');
    if (env.deletedAt) throw conflict(`environment ${slug} is already deleted`);
    assertProtectedConfirmation(env, confirmation);
    await repo.updateEnvironment(tx, env.id, { deletedAt: new Date(), deleteReason: reason });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'environment',
      entitySlug: slug,
      action: 'delete',
      metadata: { delete_reason: reason },
    });
  });
}

export async function restoreEnvironment(ctx: Ctx, scope: Scope, slug: string) {
  const row = await ctx.deps.db.transaction(async (tx) => {
    const env = await repo.lockEnvironment(tx, scope.org.id, slug);
    if (!env) throw notFound('environment');
    if (!env.deletedAt) throw conflict(`environment ${slug} is not deleted`);
    const restored = await repo.updateEnvironment(tx, env.id, { deletedAt: null, deleteReason: null });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'environment',
      entitySlug: slug,
      action: 'restore',
    });
    return restored;
  });
  return toEnvironment(row);
}

/** Hard delete of a soft-deleted environment with its secrets, variables and project links. */
export async function purgeEnvironment(ctx: Ctx, scope: Scope, slug: string, confirmation: string | null) {
  await ctx.deps.db.transaction(async (tx) => {
    const env = await repo.lockEnvironment(tx, scope.org.id, slug);
    if (!env) throw notFound('environment');
    if (!env.deletedAt) throw conflict(`environment ${slug} must be deleted before it can be purged`);
    assertProtectedConfirmation(env, confirmation);
    await repo.purgeEnvironment(tx, env.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'environment',
      entitySlug: slug,
      action: 'purge',
      security: true,
    });
  });
}

/** An environment, deleted or not, locked for the transaction; 404 when there is none. */
export async function lockEnvironmentRow(tx: Tx, scope: Scope, slug: string) {
  const row = await repo.lockEnvironment(tx, scope.org.id, slug);
  if (!row) throw notFound('environment');
  return row;
}

/** A live (not deleted) environment, or null. */
export async function findLiveEnvironment(db: DbOrTx, scope: Scope, slug: string) {
  const row = await repo.findEnvironment(db, scope.org.id, slug);
  return row && !row.deletedAt ? row : null;
}
