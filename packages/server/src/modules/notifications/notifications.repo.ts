import { and, eq, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { notifications } from '../../db/schema/index';
import { paginate } from '../../http/pagination';
import type { NotificationFilters } from './notifications.schemas';

export type NotificationRow = typeof notifications.$inferSelect;

export async function listNotifications(db: DbOrTx, organizationId: string, q: NotificationFilters) {
  const filters: (SQL | undefined)[] = [
    eq(notifications.organizationId, organizationId),
    q.project_slug ? eq(notifications.projectSlug, q.project_slug) : undefined,
    q.environment_slug ? eq(notifications.environmentSlug, q.environment_slug) : undefined,
    q.lifecycle_state ? eq(notifications.lifecycleState, q.lifecycle_state) : undefined,
    q.notification_type ? eq(notifications.notificationType, q.notification_type) : undefined,
    q.severity ? eq(notifications.severity, q.severity) : undefined,
  ];
  return paginate({
    query: q,
    sorts: { notification_last_seen_at: { column: notifications.lastSeenAt, kind: 'timestamp' } },
    tiebreak: notifications.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(notifications)
        .where(and(...filters, where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.lastSeenAt, id: r.slug }),
  });
}

export async function findNotification(db: DbOrTx, organizationId: string, slug: string, lock = false) {
  const q = db
    .select()
    .from(notifications)
    .where(and(eq(notifications.organizationId, organizationId), eq(notifications.slug, slug)));
  const [row] = lock ? await q.for('update') : await q.limit(1);
  return row ?? null;
}

export async function updateNotification(
  db: DbOrTx,
  id: string,
  values: Partial<typeof notifications.$inferInsert>,
) {
  const [row] = await db.update(notifications).set(values).where(eq(notifications.id, id)).returning();
  return row;
}
