import type { Ctx, Principal, Scope } from '../../context';
import { actorOf, systemActor } from '../../context';
import type { DbOrTx, Tx } from '../../db/client';
import { conflict, notFound } from '../../http/errors';
import { iso, isoOrNull, randomSlug } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { recordEvent } from '../events/index';
import { addMemberUnlessPresent, assertMayGrant, memberByEmail } from '../members/index';
import { lockOrganizationFor } from '../organizations/index';
import * as repo from './invitations.repo';
import type { InvitationStatus } from './invitations.schemas';

type User = Extract<Principal, { type: 'user' }>;

export function toInvitation(r: repo.InvitationRow) {
  return {
    slug: r.slug,
    email: r.email,
    role: r.role,
    status: r.status as InvitationStatus,
    invited_by_user_slug: r.invitedByUserSlug,
    expires_at: iso(r.expiresAt),
    responded_at: isoOrNull(r.respondedAt),
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

/**
 * Expiry is applied lazily where invitations are read or acted on: pending rows past their
 * expiry become `expired`, each with one `expire` event (the update matches a row only once).
 */
async function expireStale(
  db: DbOrTx,
  filter: { organizationId: string } | { slug: string },
  requestId: string | null,
) {
  for (const row of await repo.expirePending(db, filter)) {
    await recordEvent(
      db,
      { organizationId: row.organizationId, actor: systemActor, requestId },
      { entityType: 'member_invitation', entitySlug: row.slug, action: 'expire' },
    );
  }
}

/** Expiry committed on its own, so a refusal that follows (409) does not roll it back. */
const commitExpiry = (ctx: Ctx, filter: { organizationId: string } | { slug: string }) =>
  ctx.deps.db.transaction((tx) => expireStale(tx, filter, ctx.requestId));

const src = (scope: Scope, ctx: Ctx) => ({
  organizationId: scope.org.id,
  actor: scope.actor,
  requestId: ctx.requestId,
});

export async function listInvitations(
  ctx: Ctx,
  scope: Scope,
  query: ListQuery & { status?: InvitationStatus },
) {
  await commitExpiry(ctx, { organizationId: scope.org.id });
  const page = await repo.listInvitations(ctx.deps.db, scope.org.id, query.status, query);
  return { ...page, items: page.items.map(toInvitation) };
}

async function readInvitation(db: DbOrTx, slug: string, organizationId: string) {
  const row = await repo.findInvitation(db, slug, organizationId);
  if (!row) throw notFound('invitation');
  return toInvitation(row);
}

export async function getInvitation(ctx: Ctx, scope: Scope, slug: string) {
  await commitExpiry(ctx, { slug });
  return readInvitation(ctx.deps.db, slug, scope.org.id);
}

export async function createInvitation(ctx: Ctx, scope: Scope, input: { email: string; role: string }) {
  const email = input.email.trim().toLowerCase();
  const expiresAt = new Date(Date.now() + ctx.deps.config.invitationTtlHours * 3_600_000);
  const slug = await ctx.deps.db.transaction(async (tx) => {
    await lockOrganizationFor(tx, scope.org.id);
    await assertMayGrant(tx, scope, input.role);
    await expireStale(tx, { organizationId: scope.org.id }, ctx.requestId);
    const member = await memberByEmail(tx, scope.org.id, email);
    if (!member && (await repo.hasPendingInvitation(tx, scope.org.id, email))) {
      throw conflict('a pending invitation for this email already exists; revoke it first');
    }
    const now = new Date();
    const row = await repo.insertInvitation(tx, {
      organizationId: scope.org.id,
      slug: randomSlug('inv'),
      email,
      role: input.role,
      // Someone who already belongs needs neither a mail nor a response.
      status: member ? 'auto_accepted' : 'pending',
      respondedAt: member ? now : null,
      invitedByUserId: scope.principal.type === 'user' ? scope.principal.userId : null,
      expiresAt,
    });
    if (member) {
      await recordEvent(tx, src(scope, ctx), {
        entityType: 'member_invitation',
        entitySlug: row.slug,
        action: 'auto_accept',
        metadata: { email, role: input.role, member_role: member.role },
      });
    } else {
      await recordEvent(tx, src(scope, ctx), {
        entityType: 'member_invitation',
        entitySlug: row.slug,
        action: 'create',
        security: true,
        metadata: { email, role: input.role },
      });
      await ctx.deps.queue.enqueue(tx, 'email.invitation', { invitationId: row.id });
    }
    return row.slug;
  });
  return readInvitation(ctx.deps.db, slug, scope.org.id);
}

export async function revokeInvitation(ctx: Ctx, scope: Scope, slug: string) {
  await commitExpiry(ctx, { slug });
  await ctx.deps.db.transaction(async (tx) => {
    await lockOrganizationFor(tx, scope.org.id);
    const row = await repo.findInvitation(tx, slug, scope.org.id);
    if (!row) throw notFound('invitation');
    if (row.status === 'revoked') return;
    if (row.status !== 'pending') throw conflict(`the invitation is already ${row.status}`);
    await repo.setInvitationStatus(tx, row.id, 'revoked', null);
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'member_invitation',
      entitySlug: slug,
      action: 'revoke',
      security: true,
      metadata: { email: row.email, role: row.role },
    });
  });
}

/**
 * The invitee's answer. Only a user whose verified email is the invited address may see the
 * invitation at all; everyone else gets 404, as for any invisible resource.
 */
export async function respondToInvitation(ctx: Ctx, user: User, slug: string, answer: 'accept' | 'decline') {
  const db = ctx.deps.db;
  await commitExpiry(ctx, { slug });
  const found = await repo.findInvitation(db, slug);
  if (!found || !user.emailVerified || found.email !== user.email.trim().toLowerCase()) {
    throw notFound('invitation');
  }
  await db.transaction(async (tx) => {
    await lockOrganizationFor(tx, found.organizationId);
    const row = await repo.findInvitation(tx, slug);
    if (!row) throw notFound('invitation');
    if (row.status !== 'pending') throw conflict(`the invitation is ${row.status}`);
    if (row.expiresAt <= new Date()) throw conflict('the invitation has expired');
    if (answer === 'accept') await join(ctx, tx, user, row);
    await repo.setInvitationStatus(tx, row.id, answer === 'accept' ? 'accepted' : 'declined', new Date());
    await recordEvent(
      tx,
      { organizationId: row.organizationId, actor: actorOf(user), requestId: ctx.requestId },
      {
        entityType: 'member_invitation',
        entitySlug: slug,
        action: answer,
        security: answer === 'accept',
        metadata: { role: row.role },
      },
    );
  });
  return readInvitation(db, slug, found.organizationId);
}

async function join(ctx: Ctx, tx: Tx, user: User, row: repo.InvitationRow) {
  // Joined meanwhile through another invitation: the existing membership and role stand.
  if (!(await addMemberUnlessPresent(tx, row.organizationId, user.userId, row.role))) return;
  await recordEvent(
    tx,
    { organizationId: row.organizationId, actor: actorOf(user), requestId: ctx.requestId },
    {
      entityType: 'member',
      entitySlug: user.userSlug,
      action: 'create',
      security: true,
      metadata: { role: row.role, invitation_slug: row.slug },
    },
  );
}
