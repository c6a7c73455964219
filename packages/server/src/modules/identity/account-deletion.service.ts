import type { Ctx } from '../../context';
import type { DbOrTx } from '../../db/client';
import { notFound } from '../../http/errors';
import { iso, randomSlug } from '../../http/fields';
import { recordEvent } from '../events/index';
import * as repo from './account-deletion.repo';
import type { DeletionState } from './account-deletion.schemas';
import type { Me } from './me';
import { deleteSessionsOfUser } from './sessions.repo';
import { recordAccountEvent } from './user-events';

type Assessment = {
  ownershipRequired: string[];
  removalRequired: string[];
  standings: repo.MembershipStanding[];
};

/**
 * What stands between the user and deletion: an organization the user alone owns while others
 * remain would be left without an owner; one the user alone belongs to would be left empty.
 */
async function assess(db: DbOrTx, userId: string): Promise<Assessment> {
  const standings = await repo.membershipStandings(db, userId);
  return {
    ownershipRequired: standings
      .filter((s) => s.role === 'owner' && s.ownerCount === 1 && s.memberCount > 1)
      .map((s) => s.organizationSlug),
    removalRequired: standings.filter((s) => s.memberCount === 1).map((s) => s.organizationSlug),
    standings,
  };
}

export function toRequest(r: repo.DeletionRequestRow) {
  return {
    slug: r.slug,
    state: r.state as DeletionState,
    requested_at: iso(r.requestedAt),
    ownership_required: r.ownershipRequired,
    organization_removal_required: r.organizationRemovalRequired,
    ...(r.completedAt ? { completed_at: iso(r.completedAt) } : {}),
  };
}

/** The caller's latest request (an account's completed request is never seen: the account is gone). */
export async function getDeletionRequest(ctx: Ctx, me: Me) {
  const row = await repo.latestRequestOf(ctx.deps.db, me.userId);
  if (!row) throw notFound('deletion request');
  return toRequest(row);
}

const lists = (a: Assessment) => ({
  ownershipRequired: a.ownershipRequired,
  organizationRemovalRequired: a.removalRequired,
});

/** Writes the request: refreshes the open one, or creates a new one with the chosen slug. */
async function save(
  tx: DbOrTx,
  me: Me,
  open: repo.DeletionRequestRow | null,
  slug: string,
  values: Parameters<typeof repo.updateRequest>[2] & { state: DeletionState },
) {
  return open
    ? repo.updateRequest(tx, open.id, values)
    : repo.insertRequest(tx, { slug, userId: me.userId, userSlug: me.userSlug, ...values });
}

type Attempt = { open: repo.DeletionRequestRow | null; slug: string; assessment: Assessment };

/**
 * Creates the request, or re-evaluates the open one. When nothing blocks it, the account is
 * deleted in the same transaction and the request is `completed`; otherwise nothing is deleted
 * and the request lists what to resolve before confirming again. `created` tells a new request
 * (201) from a refreshed one (200).
 */
export async function requestDeletion(ctx: Ctx, me: Me) {
  const slug = randomSlug('adr');
  // Set once the deletion itself starts, so that a failure can be recorded after the rollback.
  const started: { attempt?: Attempt } = {};
  try {
    return await ctx.deps.db.transaction(async (tx) => {
      await repo.lockUser(tx, me.userId);
      await repo.lockOrganizationsOf(tx, me.userId);
      const a = await assess(tx, me.userId);
      const open = await repo.findOpenRequest(tx, me.userId);
      const src = { actor: { type: 'user' as const, slug: me.userSlug }, requestId: ctx.requestId };
      if (a.ownershipRequired.length > 0 || a.removalRequired.length > 0) {
        const state = a.ownershipRequired.length > 0 ? 'ownership_required' : 'pending';
        const row = await save(tx, me, open, slug, { state, ...lists(a) });
        await recordAccountEvent(tx, { id: me.userId, slug: me.userSlug }, src, {
          action: 'update',
          metadata: { deletion_request_slug: row.slug, state },
        });
        return { row, created: !open };
      }
      started.attempt = { open, slug, assessment: a };
      const row = await save(tx, me, open, slug, {
        state: 'completed',
        ...lists(a),
        completedAt: new Date(),
      });
      // Recorded before the delete, in each organization the user leaves: a membership change.
      for (const s of a.standings) {
        await recordEvent(
          tx,
          { organizationId: s.organizationId, ...src },
          {
            entityType: 'member',
            entitySlug: me.userSlug,
            action: 'delete',
            security: true,
            metadata: { reason: 'account_deleted', role: s.role, deletion_request_slug: row.slug },
          },
        );
      }
      await deleteSessionsOfUser(tx, me.userId);
      await repo.erasePersonalData(tx, me.userId);
      // Tokens, memberships, sessions and the billing profile go with the row (foreign keys).
      await repo.deleteUser(tx, me.userId);
      return { row, created: !open };
    });
  } catch (err) {
    if (started.attempt) await recordFailure(ctx, me, started.attempt, err);
    throw err;
  }
}

/** A database error code at most: messages can quote data, stacks show internals. */
function failureReason(err: unknown): string {
  for (let e: any = err, depth = 0; e && typeof e === 'object' && depth < 5; e = e.cause, depth++) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return `database error ${e.code}`;
  }
  return 'internal error';
}

/**
 * Marks the request failed after the deletion's transaction rolled back, in a transaction of its
 * own. If even that fails, the original error still answers the request (500).
 */
async function recordFailure(ctx: Ctx, me: Me, attempt: Attempt, err: unknown): Promise<void> {
  try {
    await ctx.deps.db.transaction(async (tx) => {
      const row = await save(tx, me, attempt.open, attempt.slug, {
        state: 'failed',
        ...lists(attempt.assessment),
        failureReason: failureReason(err),
      });
      await recordAccountEvent(
        tx,
        { id: me.userId, slug: me.userSlug },
        { actor: { type: 'user', slug: me.userSlug }, requestId: ctx.requestId },
        { action: 'update', metadata: { deletion_request_slug: row.slug, state: 'failed' } },
      );
    });
  } catch (e: any) {
    ctx.deps.log.error({ errCode: e?.code }, 'could not record a failed account deletion');
  }
}
