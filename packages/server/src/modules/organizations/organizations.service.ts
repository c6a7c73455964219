import type { Ctx, Principal, Scope } from '../../context';
import { actorOf } from '../../context';
import type { Tx } from '../../db/client';
import { notFound } from '../../http/errors';
import { iso, isoOrNull } from '../../http/fields';
import { forgettingKeys } from '../../http/key-cache';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { recordEvent } from '../events/index';
import * as repo from './organizations.repo';

const TRIAL_DAYS = 14;

export function planOf(r: repo.OrganizationRow, now = new Date()) {
  const trial = r.plan === 'trial';
  const status = !trial ? 'active' : r.trialEndsAt && r.trialEndsAt <= now ? 'expired' : 'trialing';
  return { name: r.plan, status, trial_ends_at: trial ? isoOrNull(r.trialEndsAt) : null } as const;
}

export function toOrganization(r: repo.OrganizationRow) {
  return {
    slug: r.slug,
    name: r.name,
    plan: planOf(r),
    event_log_retention_days: r.eventLogRetentionDays,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export async function listOrganizations(ctx: Ctx, principal: Principal, query: ListQuery) {
  const lister: repo.Lister =
    principal.type === 'user' ? { userId: principal.userId } : { organizationId: principal.organizationId };
  const page = await repo.listOrganizations(ctx.deps.db, lister, query);
  return { ...page, items: page.items.map(toOrganization) };
}

export async function getOrganization(ctx: Ctx, scope: Scope) {
  const row = await repo.findOrganization(ctx.deps.db, scope.org.id);
  if (!row) throw notFound('organization');
  return toOrganization(row);
}

/** A new organization starts a trial with its creator as the only owner. */
export async function createOrganization(
  ctx: Ctx,
  user: Extract<Principal, { type: 'user' }>,
  input: { name: string; slug?: string },
) {
  const db = ctx.deps.db;
  const slug = await chooseSlug(input.slug, input.name, (s) => repo.organizationSlugTaken(db, s));
  const row = await db.transaction(async (tx) => {
    // A taken slug fails the unique index, which the error handler answers with 409.
    const org = await repo.insertOrganization(tx, {
      slug,
      name: input.name,
      plan: 'trial',
      trialEndsAt: new Date(Date.now() + TRIAL_DAYS * 86_400_000),
    });
    await repo.insertOwner(tx, org.id, user.userId);
    const src = { organizationId: org.id, actor: actorOf(user), requestId: ctx.requestId };
    await recordEvent(tx, src, {
      entityType: 'organization',
      entitySlug: org.slug,
      action: 'create',
      metadata: { name: org.name, plan: org.plan },
    });
    await recordEvent(tx, src, {
      entityType: 'member',
      entitySlug: user.userSlug,
      action: 'create',
      security: true,
      metadata: { role: 'owner', via: 'organization_create' },
    });
    return org;
  });
  return toOrganization(row);
}

export async function updateOrganization(
  ctx: Ctx,
  scope: Scope,
  input: { name?: string; event_log_retention_days?: number },
) {
  const row = await forgettingKeys(
    ctx.deps.store,
    ctx.deps.db.transaction(async (tx) => {
      const updated = await repo.updateOrganization(tx, scope.org.id, {
        name: input.name,
        eventLogRetentionDays: input.event_log_retention_days,
      });
      if (!updated) throw notFound('organization');
      await recordEvent(
        tx,
        { organizationId: scope.org.id, actor: scope.actor, requestId: ctx.requestId },
        {
          entityType: 'organization',
          entitySlug: scope.org.slug,
          action: 'update',
          // Retention is a security setting: shortening it drops audit history sooner.
          security: input.event_log_retention_days !== undefined,
          metadata: { fields: Object.keys(input), ...input },
        },
      );
      return updated;
    }),
  );
  return toOrganization(row);
}

export async function deleteOrganization(ctx: Ctx, scope: Scope) {
  await forgettingKeys(
    ctx.deps.store,
    ctx.deps.db.transaction(async (tx) => {
      await repo.deleteOrganization(tx, scope.org.id);
    }),
  );
  // Events belong to the organization and cascade away with it, so this deletion can only be
  // recorded in the log.
  ctx.deps.log.info(
    { organization: scope.org.slug, actor: scope.actor, requestId: ctx.requestId },
    'organization deleted',
  );
}

/**
 * Takes the organization's row lock for the transaction: membership changes of one organization
 * (owners, invitations) happen one at a time.
 */
export async function lockOrganizationFor(tx: Tx, organizationId: string) {
  await repo.lockOrganization(tx, organizationId);
}
