import { and, eq, gte, lt, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { events } from '../../db/schema/index';
import { paginate } from '../../http/pagination';
import type { ListEventsQuery } from './events.schemas';

export type EventRow = typeof events.$inferSelect;
export type EventClass = 'activity' | 'security_audit';

/** Filters as equality/range predicates; the list index leads with (org, class, occurred_at). */
function filtersOf(q: ListEventsQuery): (SQL | undefined)[] {
  return [
    q.action ? eq(events.action, q.action) : undefined,
    q.actor_slug ? eq(events.actorSlug, q.actor_slug) : undefined,
    q.actor_type ? eq(events.actorType, q.actor_type) : undefined,
    q.entity_slug ? eq(events.entitySlug, q.entity_slug) : undefined,
    q.entity_type ? eq(events.entityType, q.entity_type) : undefined,
    q.occurred_from ? gte(events.occurredAt, new Date(q.occurred_from)) : undefined,
    q.occurred_before ? lt(events.occurredAt, new Date(q.occurred_before)) : undefined,
    q.request_id ? eq(events.requestId, q.request_id) : undefined,
  ];
}

export async function listEvents(
  db: DbOrTx,
  organizationId: string,
  eventClass: EventClass,
  query: ListEventsQuery,
) {
  return paginate({
    query,
    sorts: { event_occurred_at: { column: events.occurredAt, kind: 'timestamp' } },
    tiebreak: events.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(events)
        .where(
          and(
            eq(events.organizationId, organizationId),
            eq(events.eventClass, eventClass),
            ...filtersOf(query),
            where,
          ),
        )
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.occurredAt, id: r.slug }),
  });
}
