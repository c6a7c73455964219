import type { Store } from '../../db/client';
import { statementName } from '../../db/named';
import { addPeriods, periodStart } from '../../db/partitions';
import { events } from '../../db/schema/index';
import { literalLimit, paginate } from '../../http/pagination';
import type { ListEventsQuery } from './events.schemas';

export type EventRow = typeof events.$inferSelect;
/**
 * What a list reads of a record: everything but the internal ids, its two times as ISO text (read
 * with `isoTimes`, db/client.ts: no Date built per value, the API writes them as they come).
 */
export type EventListRow = Omit<EventRow, 'id' | 'organizationId' | 'occurredAt' | 'createdAt'> & {
  occurredAt: string;
  createdAt: string;
};
export type EventClass = 'activity' | 'security_audit';

// Every events list is raw SQL on a named prepared statement, one per shape of the list (which
// filters are given, cursor or not, the direction, the time window): no SQL is built by the ORM
// per request, PostgreSQL may keep a generic plan of a shape, and rows come as the driver parses
// them (times as ISO text). Columns are aliased to the row's field names.
const COLUMNS = `slug, schema_version as "schemaVersion", event_class as "eventClass",
       actor_type as "actorType", actor_slug as "actorSlug", entity_type as "entityType",
       entity_slug as "entitySlug", action, request_id as "requestId", occurred_at as "occurredAt",
       metadata, created_at as "createdAt"`;

/** The equality filters of the query string and their columns. */
const EQUALS = [
  ['action', 'action'],
  ['actor_slug', 'actor_slug'],
  ['actor_type', 'actor_type'],
  ['entity_slug', 'entity_slug'],
  ['entity_type', 'entity_type'],
  ['request_id', 'request_id'],
] as const;

/**
 * Filters with an index of their own that a handful of records match, spread over any time
 * (one entity's or one request's records): a week rarely holds a page of them, so their lists
 * read every kept week at once (one probe of the filter's index per weekly partition).
 */
const SELECTIVE = ['entity_slug', 'request_id'] as const;

/** How far from its anchor a list reads first (docs/operations.md#history-partitions). */
const WINDOW_MS = 7 * 86_400_000;

type Cursor = { value: string; id: string };
/** An extra bound on occurred_at that splits a list into a window and what lies beyond it. */
type Split = { from?: Date; before?: Date };

async function read(
  store: Pick<Store, 'prepared'>,
  organizationId: string,
  eventClass: EventClass,
  q: ListEventsQuery,
  cursor: Cursor | undefined,
  ascending: boolean,
  split: Split,
  limit: number,
): Promise<EventListRow[]> {
  const values: unknown[] = [organizationId, eventClass];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  const where = ['organization_id = $1', 'event_class = $2'];
  for (const [key, column] of EQUALS) {
    const v = q[key];
    if (v !== undefined) where.push(`${column} = ${param(v)}`);
  }
  if (q.occurred_from) where.push(`occurred_at >= ${param(new Date(q.occurred_from))}`);
  if (q.occurred_before) where.push(`occurred_at < ${param(new Date(q.occurred_before))}`);
  // The list's order is (occurred_at, slug); the cursor is the edge item's pair.
  if (cursor)
    where.push(
      `(occurred_at, slug) ${ascending ? '>' : '<'} (${param(cursor.value)}::timestamptz, ${param(cursor.id)}::text)`,
    );
  if (split.from) where.push(`occurred_at >= ${edge(split.from, param)}`);
  if (split.before) where.push(`occurred_at < ${edge(split.before, param)}`);
  const dir = ascending ? 'asc' : 'desc';
  const text = `select ${COLUMNS}
  from events
 where ${where.join('\n   and ')}
 order by occurred_at ${dir}, slug ${dir}
 limit ${literalLimit(limit)}`;
  const { rows } = await store.prepared(statementName(text, 'sluice_events'), text, values, {
    isoTimes: true,
  });
  return rows as EventListRow[];
}

/** How far back a window's edge is written into a statement's text (edge). */
const LITERAL_EDGE_MS = 8 * WINDOW_MS;

/**
 * A window's edge in a statement: a week's start (windowOf) written into the text while it is
 * recent, so the statement's generic plan prunes the other weeks when it is made; bound as a
 * parameter further back (a cursor or occurred_before of any age), so the statements a
 * connection keeps stay a few per shape whatever times clients send.
 */
function edge(at: Date, param: (v: unknown) => string): string {
  if (at.getTime() >= Date.now() - LITERAL_EDGE_MS) return `'${at.toISOString()}'::timestamptz`;
  return `${param(at)}::timestamptz`;
}

/**
 * Where a list's window ends, as the split between the window and the rest, or null when the
 * list reads everything at once: walking newest first, the window reaches back from the newest
 * time the list may reach (the cursor, occurred_before, or now) to the start of the week (a
 * partition's first moment, Monday 00:00 UTC) seven days before it; walking oldest first, from
 * the oldest (the cursor or occurred_from; without one, the oldest partition comes first and
 * there is no window) to the start of the week after the one seven days later. So the edge is
 * always a partition boundary, written into the statement's text while recent (edge): a
 * statement per shape and week, and its generic plan leaves the weeks outside the window out
 * when it is made. As a parameter the edge could only be pruned at execution, the generic plan was costed for every
 * week, and PostgreSQL planned each cursor page for its parameters instead (0.23 ms a page
 * against 0.05 ms executing it, on the 10M-event store; docs/benchmarks.md "History").
 */
function windowOf(q: ListEventsQuery, cursor: Cursor | undefined, ascending: boolean): Date | null {
  if (SELECTIVE.some((k) => q[k] !== undefined)) return null;
  const at = (s: string | undefined) => (s === undefined ? undefined : Date.parse(s));
  const bounds = (xs: (number | undefined)[]) => xs.filter((x): x is number => x !== undefined);
  if (!ascending) {
    const edge = Math.min(...bounds([at(cursor?.value), at(q.occurred_before)]), Date.now());
    const split = periodStart(new Date(edge - WINDOW_MS), 'week').getTime();
    // occurred_from inside the window: the window is the whole list.
    if (q.occurred_from && Date.parse(q.occurred_from) >= split) return null;
    return new Date(split);
  }
  const lower = bounds([at(cursor?.value), at(q.occurred_from)]);
  if (lower.length === 0) return null;
  const split = addPeriods(
    periodStart(new Date(Math.max(...lower) + WINDOW_MS), 'week'),
    'week',
    1,
  ).getTime();
  if (q.occurred_before && Date.parse(q.occurred_before) <= split) return null;
  return new Date(split);
}

export async function listEvents(
  store: Pick<Store, 'prepared'>,
  organizationId: string,
  eventClass: EventClass,
  query: ListEventsQuery,
) {
  return paginate<EventListRow>({
    query,
    // The fetch writes its own SQL with the same order and cursor predicate as these.
    sorts: { event_occurred_at: { column: events.occurredAt, kind: 'timestamp' } },
    tiebreak: events.slug,
    fetch: async ({ cursor, ascending, limit }) => {
      const rd = (split: Split, n: number) =>
        read(store, organizationId, eventClass, query, cursor, ascending, split, n);
      const split = windowOf(query, cursor, ascending);
      if (!split) return rd({}, limit);
      // Every row inside the window comes before every row beyond it in the list's order, so
      // the window's rows then the rest's first ones are the page the whole list would give.
      const inside = await rd(ascending ? { before: split } : { from: split }, limit);
      if (inside.length >= limit) return inside;
      const beyond = await rd(ascending ? { from: split } : { before: split }, limit - inside.length);
      return inside.concat(beyond);
    },
    keyOf: (r) => ({ value: r.occurredAt, id: r.slug }),
  });
}
