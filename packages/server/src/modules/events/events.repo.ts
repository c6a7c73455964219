import { and, eq, gte, lt, type SQL } from 'drizzle-orm';
import type { Store } from '../../db/client';
import { events } from '../../db/schema/index';
import { paginate } from '../../http/pagination';
import type { ListEventsQuery } from './events.schemas';

export type EventRow = typeof events.$inferSelect;
/** What a list reads of a record: everything but the internal ids. */
export type EventListRow = Omit<EventRow, 'id' | 'organizationId'>;
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
// most: raw SQL on a named prepared statement skips building the SQL per request, PostgreSQL's
// planning and the ORM's row mapping. Columns are aliased to the row's field names.
const FIRST_PAGE_SQL = `select slug, schema_version as "schemaVersion", event_class as "eventClass",
       actor_type as "actorType", actor_slug as "actorSlug", entity_type as "entityType",
       entity_slug as "entitySlug", action, request_id as "requestId", occurred_at as "occurredAt",
       metadata, created_at as "createdAt"
  from events
 where organization_id = $1 and event_class = $2
 order by occurred_at desc, slug desc
 limit $3`;

// The same page from the last week only: the bound is a parameter, so each execution's plan
// leaves the older weekly partitions out (docs/operations.md#history-partitions) instead of
// probing every partition kept, and the page costs the same whatever the retention holds.
const RECENT_FIRST_PAGE_SQL = FIRST_PAGE_SQL.replace(
  'and event_class = $2',
  'and event_class = $2 and occurred_at >= $4',
);
const RECENT_MS = 7 * 86_400_000;

/**
 * The first page: from the last week when it holds a full page (every row of it is newer than
 * any older row, so the page is the same), otherwise from every partition.
 */
async function firstPage(
  store: Pick<Store, 'prepared'>,
  organizationId: string,
  eventClass: EventClass,
  limit: number,
): Promise<EventListRow[]> {
  const since = new Date(Date.now() - RECENT_MS);
  const recent = await store.prepared('sluice_events_first_page_recent', RECENT_FIRST_PAGE_SQL, [
    organizationId,
    eventClass,
    limit,
    since,
  ]);
  if (recent.rows.length >= limit) return recent.rows as EventListRow[];
  const all = await store.prepared('sluice_events_first_page', FIRST_PAGE_SQL, [
    organizationId,
    eventClass,
    limit,
  ]);
  return all.rows as EventListRow[];
}

export async function listEvents(
  store: Pick<Store, 'db' | 'prepared'>,
  organizationId: string,
  eventClass: EventClass,
  query: ListEventsQuery,
) {
  return paginate<EventListRow>({
    query,
    sorts: { event_occurred_at: { column: events.occurredAt, kind: 'timestamp' } },
    tiebreak: events.slug,
    fetch: (args) => {
      const { where, limit } = args;
      const plain =
        !where &&
        query.order === 'desc' &&
        query.direction === 'next' &&
        query.sort_by === 'event_occurred_at';
      if (plain && filtersOf(query).every((f) => f === undefined))
        return firstPage(store, organizationId, eventClass, limit);
      return store.db
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
        .orderBy(...args.orderBy)
        .limit(limit);
    },
    keyOf: (r) => ({ value: r.occurredAt, id: r.slug }),
  });
}
