import type { Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { conflict, notFound } from '../../http/errors';
import { iso, isoOrNull } from '../../http/fields';
import { recordEvent } from '../events/index';
import { eventSource } from '../projects/index';
import * as repo from './notifications.repo';
import type { NotificationFilters } from './notifications.schemas';

export function toNotification(r: repo.NotificationRow) {
  return {
    slug: r.slug,
    notification_type: r.notificationType as any,
    severity: r.severity as any,
    lifecycle_state: r.lifecycleState as any,
    title: r.title,
    summary: r.summary,
    project_slug: r.projectSlug,
    environment_slug: r.environmentSlug,
    source_kind: r.sourceKind as any,
    source_action: r.sourceAction as any,
    source_refs: r.sourceRefs,
    occurrence_count: r.occurrenceCount,
    reopen_count: r.reopenCount,
    first_seen_at: iso(r.firstSeenAt),
    last_seen_at: iso(r.lastSeenAt),
    acknowledged_at: isoOrNull(r.acknowledgedAt),
    resolved_at: isoOrNull(r.resolvedAt),
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export async function listNotifications(ctx: Ctx, scope: Scope, query: NotificationFilters) {
  const page = await repo.listNotifications(ctx.deps.db, scope.org.id, query);
  return { ...page, items: page.items.map(toNotification) };
}

/** A notification of the scope's organization; 404 otherwise. */
export async function requireNotificationRow(db: DbOrTx, scope: Scope, slug: string) {
  const row = await repo.findNotification(db, scope.org.id, slug);
  if (!row) throw notFound('notification');
  return row;
}

export async function getNotification(ctx: Ctx, scope: Scope, slug: string) {
  return toNotification(await requireNotificationRow(ctx.deps.db, scope, slug));
}

/**
 * Acknowledge stops further mail for the episode; resolve closes it (a later occurrence reopens
 * it). Repeating either on a notification already there answers it unchanged, with no event.
 */
export async function transitionNotification(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  action: 'acknowledge' | 'resolve',
) {
  const now = ctx.deps.clock?.() ?? new Date();
  const row = await ctx.deps.db.transaction(async (tx) => {
    const found = await repo.findNotification(tx, scope.org.id, slug, true);
    if (!found) throw notFound('notification');
    const target = action === 'acknowledge' ? 'acknowledged' : 'resolved';
    if (found.lifecycleState === target) return found;
    if (action === 'acknowledge' && found.lifecycleState === 'resolved') {
      throw conflict('a resolved notification cannot be acknowledged');
    }
    const updated = await repo.updateNotification(tx, found.id, {
      lifecycleState: target,
      ...(action === 'acknowledge' ? { acknowledgedAt: now } : { resolvedAt: now }),
      updatedAt: now,
    });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'notification',
      entitySlug: slug,
      action,
      metadata: { notification_type: found.notificationType, from: found.lifecycleState },
    });
    return updated;
  });
  return toNotification(row);
}
