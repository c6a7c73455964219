import type { Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { notFound } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import {
  assertProtectedConfirmation,
  eventSource,
  lockLiveEnvironment,
  requireEnvironment,
} from '../environments/index';

import { recordEvent } from '../events/index';
import * as repo from './variables.repo';

export function toVariable(environmentSlug: string, r: repo.VariableRow) {
  return {
    environment_slug: environmentSlug,
    key: r.key,
    value: r.value,
    description: r.description,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

/** Every runtime variable of an environment, `{KEY: value}`, for `{{runtime.env.KEY}}` at run time. */
export async function resolveVariables(
  db: DbOrTx,
  organizationId: string,
  environmentId: string,
): Promise<Record<string, string>> {
  const rows = await repo.variablesOf(db, organizationId, environmentId);
  // fromEntries defines own properties, so a key named __proto__ stays an ordinary entry.
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

export async function listVariables(ctx: Ctx, scope: Scope, environmentSlug: string, query: ListQuery) {
  const env = await requireEnvironment(ctx.deps.db, scope, environmentSlug);
  const page = await repo.listVariables(ctx.deps.db, env.id, query);
  return { ...page, items: page.items.map((r) => toVariable(env.slug, r)) };
}

export async function getVariable(ctx: Ctx, scope: Scope, environmentSlug: string, key: string) {
  const env = await requireEnvironment(ctx.deps.db, scope, environmentSlug);
  const row = await repo.findVariable(ctx.deps.db, env.id, key);
  if (!row) throw notFound('runtime variable');
  return toVariable(env.slug, row);
}

export async function putVariable(
  ctx: Ctx,
  scope: Scope,
  environmentSlug: string,
  key: string,
  input: { value: string; description?: string | null },
  confirmation: string | null,
) {
  return ctx.deps.db.transaction(async (tx) => {
    const env = await lockLiveEnvironment(tx, scope, environmentSlug);
    assertProtectedConfirmation(env, confirmation);
    const existing = await repo.findVariable(tx, env.id, key);
    const row = existing
      ? await repo.updateVariable(tx, existing.id, { value: input.value, description: input.description })
      : await repo.insertVariable(tx, {
          organizationId: scope.org.id,
          environmentId: env.id,
          key,
          value: input.value,
          description: input.description ?? null,
        });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'environment',
      entitySlug: env.slug,
      action: existing ? 'update' : 'create',
      metadata: { runtime_variable_key: key },
    });
    return { created: !existing, item: toVariable(env.slug, row) };
  });
}

export async function deleteVariable(
  ctx: Ctx,
  scope: Scope,
  environmentSlug: string,
  key: string,
  confirmation: string | null,
) {
  await ctx.deps.db.transaction(async (tx) => {
    const env = await lockLiveEnvironment(tx, scope, environmentSlug);
    const existing = await repo.findVariable(tx, env.id, key);
    if (!existing) throw notFound('runtime variable');
    assertProtectedConfirmation(env, confirmation);
    await repo.deleteVariable(tx, existing.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'environment',
      entitySlug: env.slug,
      action: 'delete',
      metadata: { runtime_variable_key: key },
    });
  });
}
