import type { Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { conflict, forbidden, notFound, validationFailed } from '../../http/errors';
import { iso, isoOrNull } from '../../http/fields';
import { forgettingKeys } from '../../http/key-cache';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { issueToken } from '../../http/tokens';
import { isSubset } from '../../permissions';
import { recordEvent } from '../events/index';
import { permissionsOfRole } from '../roles/index';
import * as repo from './api-keys.repo';

export function toApiKey(r: repo.ApiKeyRow) {
  return {
    slug: r.slug,
    name: r.name,
    token_prefix: r.tokenPrefix,
    role: r.role,
    can_manage_api_keys: r.canManageApiKeys,
    description: r.description,
    created_by_user_slug: r.createdByUserSlug,
    expires_at: isoOrNull(r.expiresAt),
    revoked_at: isoOrNull(r.revokedAt),
    last_used_at: isoOrNull(r.lastUsedAt),
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

/** An API key manages keys only when its own flag says so (docs/api-conventions.md#tokens). */
function assertMayManage(scope: Scope) {
  if (scope.principal.type === 'api_key' && !scope.principal.canManageApiKeys) {
    throw forbidden('this API key may not manage API keys (can_manage_api_keys is false)');
  }
}

const src = (scope: Scope, ctx: Ctx) => ({
  organizationId: scope.org.id,
  actor: scope.actor,
  requestId: ctx.requestId,
});

export async function listKeys(ctx: Ctx, scope: Scope, query: ListQuery) {
  const page = await repo.listApiKeys(ctx.deps.db, scope.org.id, query);
  return { ...page, items: page.items.map(toApiKey) };
}

export async function getKey(ctx: Ctx, scope: Scope, slug: string) {
  const row = await repo.findApiKey(ctx.deps.db, scope.org.id, slug);
  if (!row) throw notFound('API key');
  return toApiKey(row);
}

export type CreateKeyInput = {
  name: string;
  role: string;
  can_manage_api_keys: boolean;
  description?: string | null;
  expires_at?: string | null;
  slug?: string;
};

export async function createKey(ctx: Ctx, scope: Scope, input: CreateKeyInput) {
  assertMayManage(scope);
  const rolePermissions = await permissionsOfRole(ctx.deps.db, scope.org.id, input.role);
  if (!rolePermissions) {
    throw validationFailed([
      { path: 'role', code: 'unknown_role', message: `role ${input.role} does not exist` },
    ]);
  }
  if (!isSubset(rolePermissions, scope.permissions)) {
    throw forbidden('an API key cannot have more permissions than its creator');
  }
  if (input.can_manage_api_keys && !rolePermissions.has('api_keys.manage')) {
    throw validationFailed([
      {
        path: 'can_manage_api_keys',
        code: 'role_lacks_permission',
        message: 'can_manage_api_keys needs a role that grants api_keys.manage',
      },
    ]);
  }
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) {
    throw validationFailed([
      { path: 'expires_at', code: 'in_past', message: 'expires_at must be in the future' },
    ]);
  }
  const db = ctx.deps.db;
  const slug = await chooseSlug(input.slug, input.name, (s) => repo.apiKeySlugTaken(db, scope.org.id, s));
  const issued = issueToken('key');
  const created = await db.transaction(async (tx) => {
    if (await repo.apiKeySlugTaken(tx, scope.org.id, slug))
      throw conflict(`an API key with slug ${slug} already exists`);
    const row = await repo.insertApiKey(tx, {
      organizationId: scope.org.id,
      slug,
      name: input.name,
      description: input.description ?? null,
      tokenPrefix: issued.prefix,
      tokenHash: issued.hash,
      role: input.role,
      canManageApiKeys: input.can_manage_api_keys,
      createdByUserId: scope.principal.type === 'user' ? scope.principal.userId : null,
      expiresAt,
    });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'api_key',
      entitySlug: slug,
      action: 'create',
      security: true,
      metadata: {
        role: input.role,
        can_manage_api_keys: input.can_manage_api_keys,
        token_prefix: issued.prefix,
      },
    });
    return row;
  });
  const withCreator = await repo.findApiKey(db, scope.org.id, created.slug);
  return { ...toApiKey(withCreator!), token: issued.token };
}

export async function updateKey(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  input: { name?: string; description?: string | null },
) {
  assertMayManage(scope);
  const db = ctx.deps.db;
  await db.transaction(async (tx) => {
    const row = await repo.findApiKey(tx, scope.org.id, slug);
    if (!row) throw notFound('API key');
    await repo.updateApiKey(tx, row.id, input);
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'api_key',
      entitySlug: slug,
      action: 'update',
      metadata: { fields: Object.keys(input) },
    });
  });
  return getKey(ctx, scope, slug);
}

async function guardTarget(tx: DbOrTx, scope: Scope, row: repo.ApiKeyRow) {
  // Acting on a key is acting with its power: nobody rotates or revokes a stronger key.
  const target = (await permissionsOfRole(tx, scope.org.id, row.role)) ?? new Set();
  if (!isSubset(target, scope.permissions)) throw forbidden('that API key has more permissions than you');
}

export async function rotateKey(ctx: Ctx, scope: Scope, slug: string) {
  assertMayManage(scope);
  const db = ctx.deps.db;
  const issued = issueToken('key');
  await forgettingKeys(
    ctx.deps.store,
    db.transaction(async (tx) => {
      const row = await repo.findApiKey(tx, scope.org.id, slug);
      if (!row) throw notFound('API key');
      if (row.revokedAt) throw conflict('a revoked API key cannot be rotated');
      await guardTarget(tx, scope, row);
      await repo.updateApiKey(tx, row.id, { tokenHash: issued.hash, tokenPrefix: issued.prefix });
      await recordEvent(tx, src(scope, ctx), {
        entityType: 'api_key',
        entitySlug: slug,
        action: 'rotate',
        security: true,
        metadata: { token_prefix: issued.prefix },
      });
    }),
  );
  return { ...(await getKey(ctx, scope, slug)), token: issued.token };
}

export async function revokeKey(ctx: Ctx, scope: Scope, slug: string) {
  assertMayManage(scope);
  const db = ctx.deps.db;
  await forgettingKeys(
    ctx.deps.store,
    db.transaction(async (tx) => {
      const row = await repo.findApiKey(tx, scope.org.id, slug);
      if (!row) throw notFound('API key');
      await guardTarget(tx, scope, row);
      if (row.revokedAt) return;
      await repo.updateApiKey(tx, row.id, { revokedAt: new Date() });
      await recordEvent(tx, src(scope, ctx), {
        entityType: 'api_key',
        entitySlug: slug,
        action: 'revoke',
        security: true,
      });
    }),
  );
  return getKey(ctx, scope, slug);
}

export async function deleteKey(ctx: Ctx, scope: Scope, slug: string) {
  assertMayManage(scope);
  await forgettingKeys(
    ctx.deps.store,
    ctx.deps.db.transaction(async (tx) => {
      const row = await repo.findApiKey(tx, scope.org.id, slug);
      if (!row) throw notFound('API key');
      await guardTarget(tx, scope, row);
      await repo.deleteApiKey(tx, row.id);
      await recordEvent(tx, src(scope, ctx), {
        entityType: 'api_key',
        entitySlug: slug,
        action: 'delete',
        security: true,
      });
    }),
  );
}
