import type { Ctx, Scope } from '../../context';
import { conflict, forbidden, notFound } from '../../http/errors';
import { iso } from '../../http/fields';
import { forgettingKeys } from '../../http/key-cache';
import { type ListQuery, onePage, paginateInMemory } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import {
  allPermissions,
  builtInRoleSlugs,
  builtInRoles,
  isBuiltInRole,
  isSubset,
  type Permission,
  permissionCatalog,
} from '../../permissions';
import { recordEvent } from '../events/index';
import * as repo from './roles.repo';

type RoleView = {
  slug: string;
  name: string;
  description: string | null;
  permissions: Permission[];
  builtIn: boolean;
  createdAt: Date;
  updatedAt: Date;
};

/** Known names in catalog order; a name dropped from the catalog simply stops granting. */
function normalize(names: Iterable<string>): Permission[] {
  const wanted = new Set(names);
  return allPermissions.filter((p) => wanted.has(p));
}

function customView(r: repo.RoleRow): RoleView {
  return {
    slug: r.slug,
    name: r.name,
    description: r.description,
    permissions: normalize(r.permissions),
    builtIn: false,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** Built-in roles are not stored; they read as if created with the organization. */
function builtInViews(orgCreatedAt: Date): RoleView[] {
  return builtInRoleSlugs.map((slug) => ({
    slug,
    name: builtInRoles[slug].name,
    description: builtInRoles[slug].description,
    permissions: normalize(builtInRoles[slug].permissions),
    builtIn: true,
    createdAt: orgCreatedAt,
    updatedAt: orgCreatedAt,
  }));
}

export function toRole(v: RoleView) {
  return {
    slug: v.slug,
    name: v.name,
    description: v.description,
    permissions: v.permissions,
    built_in: v.builtIn,
    created_at: iso(v.createdAt),
    updated_at: iso(v.updatedAt),
  };
}

const src = (scope: Scope, ctx: Ctx) => ({
  organizationId: scope.org.id,
  actor: scope.actor,
  requestId: ctx.requestId,
});

async function orgCreatedAt(ctx: Ctx, scope: Scope): Promise<Date> {
  const createdAt = await repo.organizationCreatedAt(ctx.deps.db, scope.org.id);
  if (!createdAt) throw notFound('organization');
  return createdAt;
}

export async function listRoles(ctx: Ctx, scope: Scope, query: ListQuery) {
  const custom = await repo.listCustomRoles(ctx.deps.db, scope.org.id);
  const rows = [...builtInViews(await orgCreatedAt(ctx, scope)), ...custom.map(customView)];
  const page = paginateInMemory({
    query,
    sorts: {
      role_created_at: { kind: 'timestamp', valueOf: (r) => r.createdAt },
      role_updated_at: { kind: 'timestamp', valueOf: (r) => r.updatedAt },
      role_name: { kind: 'text', valueOf: (r) => r.name },
    },
    idOf: (r) => r.slug,
    rows,
  });
  return { ...page, items: page.items.map(toRole) };
}

export async function getRole(ctx: Ctx, scope: Scope, slug: string) {
  if (isBuiltInRole(slug)) {
    return toRole(builtInViews(await orgCreatedAt(ctx, scope)).find((r) => r.slug === slug)!);
  }
  const row = await repo.findRole(ctx.deps.db, scope.org.id, slug);
  if (!row) throw notFound('role');
  return toRole(customView(row));
}

function assertHolds(scope: Scope, permissions: Iterable<Permission>, message: string) {
  if (!isSubset(permissions, scope.permissions)) throw forbidden(message);
}

function refuseBuiltIn(slug: string) {
  if (isBuiltInRole(slug)) throw conflict(`${slug} is a built-in role and cannot be changed or deleted`);
}

export type CreateRoleInput = {
  name: string;
  slug?: string;
  description?: string | null;
  permissions: Permission[];
};

export async function createRole(ctx: Ctx, scope: Scope, input: CreateRoleInput) {
  const permissions = normalize(input.permissions);
  assertHolds(scope, permissions, 'you cannot create a role with permissions you do not hold');
  if (input.slug && isBuiltInRole(input.slug)) throw conflict(`${input.slug} is the slug of a built-in role`);
  const db = ctx.deps.db;
  const slug = await chooseSlug(
    input.slug,
    input.name,
    async (s) => isBuiltInRole(s) || Boolean(await repo.findRole(db, scope.org.id, s)),
  );
  const row = await db.transaction(async (tx) => {
    if (await repo.findRole(tx, scope.org.id, slug))
      throw conflict(`a role with slug ${slug} already exists`);
    const created = await repo.insertRole(tx, {
      organizationId: scope.org.id,
      slug,
      name: input.name,
      description: input.description ?? null,
      permissions,
    });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'role',
      entitySlug: slug,
      action: 'create',
      security: true,
      metadata: { name: input.name, permissions },
    });
    return created;
  });
  return toRole(customView(row));
}

export async function updateRole(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  input: { name?: string; description?: string | null; permissions?: Permission[] },
) {
  refuseBuiltIn(slug);
  const permissions = input.permissions && normalize(input.permissions);
  const row = await forgettingKeys(
    ctx.deps.store,
    ctx.deps.db.transaction(async (tx) => {
      const current = await repo.findRole(tx, scope.org.id, slug);
      if (!current) throw notFound('role');
      // Editing a role is exercising its power, whatever the new list holds.
      assertHolds(
        scope,
        normalize(current.permissions),
        'you cannot change a role with permissions you do not hold',
      );
      if (permissions) assertHolds(scope, permissions, 'you cannot grant permissions you do not hold');
      const updated = await repo.updateRole(tx, current.id, {
        name: input.name,
        description: input.description,
        permissions,
      });
      await recordEvent(tx, src(scope, ctx), {
        entityType: 'role',
        entitySlug: slug,
        action: 'update',
        security: true,
        metadata: {
          fields: Object.keys(input),
          ...(permissions
            ? { from_permissions: normalize(current.permissions), to_permissions: permissions }
            : {}),
        },
      });
      return updated;
    }),
  );
  return toRole(customView(row));
}

export async function deleteRole(ctx: Ctx, scope: Scope, slug: string) {
  refuseBuiltIn(slug);
  await forgettingKeys(
    ctx.deps.store,
    ctx.deps.db.transaction(async (tx) => {
      const current = await repo.findRole(tx, scope.org.id, slug);
      if (!current) throw notFound('role');
      assertHolds(
        scope,
        normalize(current.permissions),
        'you cannot delete a role with permissions you do not hold',
      );
      const used = await repo.roleUsage(tx, scope.org.id, slug);
      if (used.members + used.invitations + used.apiKeys > 0) {
        throw conflict(
          `role ${slug} is still used by ${used.members} member(s), ${used.invitations} pending invitation(s) and ${used.apiKeys} API key(s)`,
        );
      }
      await repo.deleteRole(tx, current.id);
      await recordEvent(tx, src(scope, ctx), {
        entityType: 'role',
        entitySlug: slug,
        action: 'delete',
        security: true,
        metadata: { permissions: normalize(current.permissions) },
      });
    }),
  );
}

export function listPermissions() {
  return {
    permissions: allPermissions.map((name) => ({ name, description: permissionCatalog[name] as string })),
    ...onePage,
  };
}
