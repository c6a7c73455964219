import { and, desc, eq, gte, lt, type SQL, sql } from 'drizzle-orm';
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

// The first page, newest first, without filters is what a console and an audit export ask for
// most: a prepared statement skips building the SQL per request and PostgreSQL's planning.
function prepareFirstPage(db: DbOrTx) {
  return db
    .select()
    .from(events)
    .where(
      and(eq(events.organizationId, sql.placeholder('org')), eq(events.eventClass, sql.placeholder('cls'))),
    )
    .orderBy(desc(events.occurredAt), desc(events.slug))
    .limit(sql.placeholder('limit'))
    .prepare('sluice_events_first_page');
}
const firstPages = new WeakMap<DbOrTx, ReturnType<typeof prepareFirstPage>>();

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
    fetch: ({ where, orderBy, limit }) => {
      const plain =
        !where &&
        query.order === 'desc' &&
        query.direction === 'next' &&
        query.sort_by === 'event_occurred_at';
      if (plain && filtersOf(query).every((f) => f === undefined)) {
        let page = firstPages.get(db);
        if (!page) {
          page = prepareFirstPage(db);
          firstPages.set(db, page);
        }
        return page.execute({ org: organizationId, cls: eventClass, limit });
      }
      return db
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
        .limit(limit);
    },
    keyOf: (r) => ({ value: r.occurredAt, id: r.slug }),
  });
}
