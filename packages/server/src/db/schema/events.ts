import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { id, ts } from './columns';
import { organizations } from './organizations';

export const events = pgTable(
  'events',
  {
    id: id(),
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
    uniqueIndex('events_slug_uq').on(t.slug),
    index('events_list_idx').on(t.organizationId, t.eventClass, t.occurredAt, t.slug),
  ],
);
