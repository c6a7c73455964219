import type { Ctx, Scope } from '../../context';
import { iso, isoOrNull } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { requireNotificationRow } from '../notifications/index';
import * as repo from './attempts.repo';

export function toAttempt(r: repo.AttemptRow, notificationSlug: string) {
  return {
    slug: r.slug,
    notification_record_slug: notificationSlug,
    alert_policy_slug: r.alertPolicySlug,
    destination_slug: r.destinationSlug,
    destination_name: r.destinationName,
    destination_type: r.destinationType as 'email',
    status: r.status as 'queued',
    provider_attempt: r.providerAttempt,
    provider_response_metadata: r.providerResponseMetadata,
    error_category: r.errorCategory,
    error_message: r.errorMessage,
    queued_at: iso(r.queuedAt),
    sent_at: isoOrNull(r.sentAt),
    failed_at: isoOrNull(r.failedAt),
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export async function listNotificationAttempts(ctx: Ctx, scope: Scope, slug: string, query: ListQuery) {
  const n = await requireNotificationRow(ctx.deps.db, scope, slug);
  const page = await repo.listAttempts(ctx.deps.db, scope.org.id, n.id, query);
  return { ...page, items: page.items.map((a) => toAttempt(a, slug)) };
}

/** The bounded bulk read: unknown slugs simply contribute nothing (it is a diagnostics view). */
export async function bulkAttempts(ctx: Ctx, scope: Scope, slugs: string[], perNotification: number) {
  const unique = [...new Set(slugs)];
  const rows = await repo.recentAttempts(ctx.deps.db, scope.org.id, unique, perNotification);
  return {
    alert_delivery_attempts: rows.map((r) => toAttempt(r.attempt, r.notificationSlug)),
    has_more: false,
    next_cursor: null,
    prev_cursor: null,
  };
}
