import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { ts } from './columns';
import { organizations } from './organizations';

// Range-partitioned by occurred_at, one partition a week (declared by hand in migration 0017:
// drizzle-kit does not declare partitions; see docs/operations.md#history-partitions). Every
// unique key includes occurred_at, as a partitioned table requires; slugs stay unique by
// construction (random).
export const events = pgTable(
  'events',
  {
    id: uuid('id').notNull().default(sql`gen_random_uuid()`),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    schemaVersion: integer('schema_version').notNull().default(1),
    eventClass: text('event_class').notNull(),
    actorType: text('actor_type').notNull(),
    actorSlug: text('actor_slug'),
    entityType: text('entity_type').notNull(),
    entitySlug: text('entity_slug'),
    action: text('action').notNull(),
    requestId: text('request_id'),
    occurredAt: ts('occurred_at').notNull().defaultNow(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: 'events_pkey', columns: [t.id, t.occurredAt] }),
    uniqueIndex('events_slug_uq').on(t.slug, t.occurredAt),
    index('events_list_idx').on(t.organizationId, t.eventClass, t.occurredAt, t.slug),
    // The entity and request filters of the lists, and the trigger refusal count, without
    // walking every event of the organization.
    index('events_entity_idx').on(t.organizationId, t.entitySlug, t.occurredAt),
    index('events_request_idx').on(t.organizationId, t.requestId),
  ],
);
