import type { Ctx, Principal, Scope } from '../../context';
import type { DbOrTx, Tx } from '../../db/client';
import { conflict, forbidden, notFound, validationFailed } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { isSubset, type Permission, visibilityOf } from '../../permissions';
import { recordEvent } from '../events/index';
import { lockOrganizationFor, resolveScope } from '../organizations/index';

import { permissionsOfRole } from '../roles/index';
import * as repo from './members.repo';

export function toMember(r: repo.MemberRow) {
  return {
    user_slug: r.userSlug,
    email: r.email,
    name: r.name,
    role: r.role,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

const src = (scope: Scope, ctx: Ctx) => ({
  organizationId: scope.org.id,
  actor: scope.actor,
  requestId: ctx.requestId,
});

export async function listMembers(ctx: Ctx, scope: Scope, query: ListQuery) {
  const page = await repo.listMembers(ctx.deps.db, scope.org.id, query);
  return { ...page, items: page.items.map(toMember) };
}

export async function getMember(ctx: Ctx, scope: Scope, userSlug: string) {
  const row = await repo.findMember(ctx.deps.db, scope.org.id, userSlug);
  if (!row) throw notFound('member');
  return toMember(row);
}

/**
 * Who may hand out a role: it must exist, grant nothing the caller lacks, and only an owner
 * makes owners. Shared with invitations, which grant a role on acceptance.
 */
export async function assertMayGrant(db: DbOrTx, scope: Scope, role: string): Promise<Set<Permission>> {
  const granted = await permissionsOfRole(db, scope.org.id, role);
  if (!granted) {
    throw validationFailed([{ path: 'role', code: 'unknown_role', message: `role ${role} does not exist` }]);
  }
  if (role === 'owner' && scope.role !== 'owner') throw forbidden('only an owner can grant the owner role');
  if (!isSubset(granted, scope.permissions)) {
    throw forbidden('you cannot grant a role with permissions you do not hold');
  }
  return granted;
}

/** Acting on a member is acting on their power: nobody changes or removes a stronger member. */
async function assertMayManage(db: DbOrTx, scope: Scope, target: repo.MemberRow) {
  if (target.role === 'owner' && scope.role !== 'owner') {
    throw forbidden('only an owner can change or remove an owner');
  }
  const held = (await permissionsOfRole(db, scope.org.id, target.role)) ?? new Set<Permission>();
  if (!isSubset(held, scope.permissions)) throw forbidden('that member has permissions you do not hold');
}

async function assertNotLastOwner(db: DbOrTx, organizationId: string, target: repo.MemberRow, what: string) {
  if (target.role === 'owner' && (await repo.countOwners(db, organizationId)) <= 1) {
    throw conflict(`the last owner cannot be ${what}; make another member owner first`);
  }
}

export async function updateMemberRole(ctx: Ctx, scope: Scope, userSlug: string, role: string) {
  await ctx.deps.db.transaction(async (tx) => {
    await lockOrganizationFor(tx, scope.org.id);
    const target = await repo.findMember(tx, scope.org.id, userSlug);
    if (!target) throw notFound('member');
    await assertMayGrant(tx, scope, role);
    await assertMayManage(tx, scope, target);
    if (target.role === role) return;
    if (role !== 'owner') await assertNotLastOwner(tx, scope.org.id, target, 'demoted');
    await repo.updateMemberRole(tx, target.id, role);
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'member',
      entitySlug: userSlug,
      action: 'update',
      security: true,
      metadata: { from_role: target.role, to_role: role },
    });
  });
  return getMember(ctx, scope, userSlug);
}

/**
 * Removing someone else needs members.manage; leaving (removing yourself) needs only membership,
 * so this route resolves the organization itself instead of declaring one permission.
 */
export async function removeMember(ctx: Ctx, principal: Principal, orgSlug: string, userSlug: string) {
  const db = ctx.deps.db;
  const scope = await resolveScope(db, principal, orgSlug);
  if (!scope) throw notFound('organization');
  const leaving = principal.type === 'user' && principal.userSlug === userSlug;
  if (!leaving) await requirePermission(ctx, scope, 'members.manage');
  await db.transaction(async (tx) => {
    await lockOrganizationFor(tx, scope.org.id);
    const target = await repo.findMember(tx, scope.org.id, userSlug);
    if (!target) throw notFound('member');
    if (!leaving) await assertMayManage(tx, scope, target);
    await assertNotLastOwner(tx, scope.org.id, target, leaving ? 'leave the organization' : 'removed');
    await repo.deleteMember(tx, target.id);
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'member',
      entitySlug: userSlug,
      action: 'delete',
      security: true,
      metadata: { role: target.role, left: leaving },
    });
  });
}

/** The same answer and audit record as the route-level check of the auth hooks. */
async function requirePermission(ctx: Ctx, scope: Scope, permission: Permission) {
  if (scope.permissions.has(permission)) return;
  await recordEvent(ctx.deps.db, src(scope, ctx), {
    entityType: 'organization',
    entitySlug: scope.org.slug,
    action: 'read',
    securityOnly: true,
    metadata: { outcome: 'permission_denied', permission, method: 'DELETE', route: 'members' },
  });
  if (!scope.permissions.has(visibilityOf(permission))) throw notFound('member');
  throw forbidden(`this operation needs the ${permission} permission`);
}

/** The member of an organization with this email, if any (an invitation to them is refused). */
export async function memberByEmail(db: DbOrTx, organizationId: string, email: string) {
  return repo.findMemberByEmail(db, organizationId, email);
}

/** Adds a user with a role unless they are a member already (then their membership stands). */
export async function addMemberUnlessPresent(tx: Tx, organizationId: string, userId: string, role: string) {
  if (await repo.isMember(tx, organizationId, userId)) return false;
  await repo.insertMember(tx, { organizationId, userId, role });
  return true;
}
