import { randomUUID } from 'node:crypto';
import type { Ctx, Scope } from '../../context';
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
import * as repo from './secrets.repo';
import { secretBinding } from './secrets.resolve';

export function toSecret(environmentSlug: string, r: repo.SecretMeta) {
  return {
    environment_slug: environmentSlug,
    key: r.key,
    description: r.description,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export async function listSecrets(ctx: Ctx, scope: Scope, environmentSlug: string, query: ListQuery) {
  const env = await requireEnvironment(ctx.deps.db, scope, environmentSlug);
  const page = await repo.listSecrets(ctx.deps.db, env.id, query);
  return { ...page, items: page.items.map((r) => toSecret(env.slug, r)) };
}

/** Creates or replaces a secret; the value is sealed to this organization and row before it is stored. */
export async function putSecret(
  ctx: Ctx,
  scope: Scope,
  environmentSlug: string,
  key: string,
  input: { value: string; description?: string | null },
  confirmation: string | null,
) {
  const { keyring } = ctx.deps;
  return ctx.deps.db.transaction(async (tx) => {
    const env = await lockLiveEnvironment(tx, scope, environmentSlug);
    assertProtectedConfirmation(env, confirmation);
    const existing = await repo.findSecret(tx, env.id, key);
    // The row id is part of the ciphertext's binding, so it is fixed before sealing.
    const id = existing?.id ?? randomUUID();
    const sealed = await keyring.encrypt(tx, input.value, secretBinding(scope.org.id, id));
    const row = existing
      ? await repo.updateSecret(tx, id, { ...sealed, description: input.description })
      : await repo.insertSecret(tx, {
          id,
          organizationId: scope.org.id,
          environmentId: env.id,
          key,
          description: input.description ?? null,
          ...sealed,
        });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'environment',
      entitySlug: env.slug,
      action: existing ? 'update' : 'create',
      security: true,
      metadata: { key },
    });
    return { created: !existing, item: toSecret(env.slug, row) };
  });
}

export async function deleteSecret(
  ctx: Ctx,
  scope: Scope,
  environmentSlug: string,
  key: string,
  confirmation: string | null,
) {
  await ctx.deps.db.transaction(async (tx) => {
    const env = await lockLiveEnvironment(tx, scope, environmentSlug);
    const existing = await repo.findSecret(tx, env.id, key);
    if (!existing) throw notFound('environment secret');
    assertProtectedConfirmation(env, confirmation);
    await repo.deleteSecret(tx, existing.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'environment',
      entitySlug: env.slug,
      action: 'delete',
      security: true,
      metadata: { key },
    });
  });
}
