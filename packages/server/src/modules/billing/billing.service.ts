import type { Ctx, Scope } from '../../context';
import { notFound } from '../../http/errors';
import { iso } from '../../http/fields';
import { recordEvent } from '../events/index';
import { type Me, recordAccountEvent } from '../identity/index';

import * as repo from './billing.repo';
import type { PutBillingProfile } from './billing.schemas';

type Owner = { type: 'user' | 'organization'; slug: string };

function toProfile(owner: Owner, r: repo.BillingProfileRow) {
  return {
    owner_type: owner.type,
    owner_slug: owner.slug,
    billing_name: r.billingName,
    billing_email: r.billingEmail,
    address: {
      line1: r.line1,
      line2: r.line2,
      city: r.city,
      region: r.region,
      postal_code: r.postalCode,
    },
    country: r.country,
    tax_id: r.taxId,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

// Event metadata names what changed, never the values: an address is personal data and the
// audit trail outlives it.
const eventMetadata = (created: boolean) => ({ billing_profile: created ? 'created' : 'replaced' });

export async function getUserProfile(ctx: Ctx, me: Me) {
  const row = await repo.findProfile(ctx.deps.db, { userId: me.userId });
  if (!row) throw notFound('billing profile');
  return toProfile({ type: 'user', slug: me.userSlug }, row);
}

export async function putUserProfile(ctx: Ctx, me: Me, input: PutBillingProfile) {
  const { row, created } = await ctx.deps.db.transaction(async (tx) => {
    const out = await repo.upsertProfile(tx, { userId: me.userId }, input);
    await recordAccountEvent(
      tx,
      { id: me.userId, slug: me.userSlug },
      { actor: { type: 'user', slug: me.userSlug }, requestId: ctx.requestId },
      { action: 'update', metadata: eventMetadata(out.created) },
    );
    return out;
  });
  return { profile: toProfile({ type: 'user', slug: me.userSlug }, row), created };
}

export async function getOrgProfile(ctx: Ctx, scope: Scope) {
  const row = await repo.findProfile(ctx.deps.db, { organizationId: scope.org.id });
  if (!row) throw notFound('billing profile');
  return toProfile({ type: 'organization', slug: scope.org.slug }, row);
}

export async function putOrgProfile(ctx: Ctx, scope: Scope, input: PutBillingProfile) {
  const { row, created } = await ctx.deps.db.transaction(async (tx) => {
    const out = await repo.upsertProfile(tx, { organizationId: scope.org.id }, input);
    await recordEvent(
      tx,
      { organizationId: scope.org.id, actor: scope.actor, requestId: ctx.requestId },
      {
        entityType: 'organization',
        entitySlug: scope.org.slug,
        action: 'update',
        metadata: eventMetadata(out.created),
      },
    );
    return out;
  });
  return { profile: toProfile({ type: 'organization', slug: scope.org.slug }, row), created };
}
