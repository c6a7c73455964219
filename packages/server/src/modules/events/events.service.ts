import type { ActorType, Ctx, Scope } from '../../context';
import { onReads } from '../../db/replica';
import { iso } from '../../http/fields';
import type { EntityType, EventAction, eventClasses } from './events.record';
import * as repo from './events.repo';
import type { ListEventsQuery } from './events.schemas';

export function toEvent(r: repo.EventListRow) {
  return {
    schema_version: r.schemaVersion,
    event_class: r.eventClass as (typeof eventClasses)[number],
    slug: r.slug,
    actor_type: r.actorType as ActorType,
    actor_slug: r.actorSlug,
    entity_type: r.entityType as EntityType,
    entity_slug: r.entitySlug,
    action: r.action as EventAction,
    request_id: r.requestId,
    occurred_at: iso(r.occurredAt),
    metadata: r.metadata,
    created_at: iso(r.createdAt),
  };
}

/**
 * One organization's log of one class. The retention boundary is reported on the
 * security-audit list, where auditors need to know how far back the record reaches.
 */
export async function listEvents(
  ctx: Ctx,
  scope: Scope,
  eventClass: repo.EventClass,
  query: ListEventsQuery,
) {
  // A read replica answers while it is fresh (db/replica.ts); the store otherwise.
  const page = await onReads(ctx.deps, (store) => repo.listEvents(store, scope.org.id, eventClass, query));
  return {
    events: page.items.map(toEvent),
    has_more: page.has_more,
    next_cursor: page.next_cursor,
    prev_cursor: page.prev_cursor,
    event_log_retention_days: eventClass === 'security_audit' ? scope.org.eventLogRetentionDays : null,
  };
}
