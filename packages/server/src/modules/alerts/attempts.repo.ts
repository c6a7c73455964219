import { and, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { alertDeliveryAttempts, notifications } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type AttemptRow = typeof alertDeliveryAttempts.$inferSelect;
export type AttemptWithSlug = { attempt: AttemptRow; notificationSlug: string };

export async function listAttempts(
  db: DbOrTx,
  organizationId: string,
  notificationId: string,
  query: ListQuery,
) {
  return paginate({
    query,
    sorts: {
      alert_delivery_attempt_created_at: { column: alertDeliveryAttempts.createdAt, kind: 'timestamp' },
    },
    tiebreak: alertDeliveryAttempts.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(alertDeliveryAttempts)
        .where(
          and(
            eq(alertDeliveryAttempts.organizationId, organizationId),
            eq(alertDeliveryAttempts.notificationId, notificationId),
            where,
          ),
        )
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

/** The newest `perNotification` attempts of each notification, in one bounded query. */
export async function recentAttempts(
  db: DbOrTx,
  organizationId: string,
  slugs: string[],
  perNotification: number,
): Promise<AttemptWithSlug[]> {
  const ranked = db
    .select({
      id: alertDeliveryAttempts.id,
      notificationSlug: sql<string>`${notifications.slug}`.as('notification_slug'),
      rank: sql<number>`row_number() over (partition by ${alertDeliveryAttempts.notificationId}
        order by ${alertDeliveryAttempts.createdAt} desc, ${alertDeliveryAttempts.slug} desc)`.as('rank'),
    })
    .from(alertDeliveryAttempts)
    .innerJoin(notifications, eq(notifications.id, alertDeliveryAttempts.notificationId))
    .where(and(eq(alertDeliveryAttempts.organizationId, organizationId), inArray(notifications.slug, slugs)))
    .as('ranked');
  const rows = await db
    .select({ attempt: alertDeliveryAttempts, notificationSlug: ranked.notificationSlug, rank: ranked.rank })
    .from(ranked)
    .innerJoin(alertDeliveryAttempts, eq(alertDeliveryAttempts.id, ranked.id))
    .where(sql`${ranked.rank} <= ${perNotification}`);
  const order = new Map(slugs.map((s, i) => [s, i]));
  return rows
    .sort(
      (a, b) =>
        (order.get(a.notificationSlug) ?? 0) - (order.get(b.notificationSlug) ?? 0) ||
        Number(a.rank) - Number(b.rank),
    )
    .map((r) => ({ attempt: r.attempt, notificationSlug: r.notificationSlug }));
}
