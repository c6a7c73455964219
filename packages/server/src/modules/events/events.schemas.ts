import { z } from 'zod';
import { orgParams, slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, pageMeta } from '../../http/pagination';
import { actorTypes, entityTypes, eventActions, eventClasses } from './events.record';

export const eventSchema = z
  .object({
    schema_version: z.number().int().min(1).describe('Version of this record layout; currently 1.'),
    event_class: z.enum(eventClasses).describe('Which log the record belongs to.'),
    slug: slugSchema.describe('Identifier of the event record.'),
    actor_type: z.enum(actorTypes).describe('Kind of principal that acted.'),
    actor_slug: slugSchema.nullable().describe('Slug of the user or API key that acted, or null.'),
    entity_type: z.enum(entityTypes).describe('Kind of resource the event is about.'),
    entity_slug: slugSchema.nullable().describe('Slug of the resource the event is about, or null.'),
    action: z.enum(eventActions).describe('What happened to the entity.'),
    request_id: z
      .string()
      .nullable()
      .describe('Correlation id of the API request that caused the event (its X-Request-Id), or null.'),
    occurred_at: timestampSchema.describe('When the event happened (ISO 8601).'),
    metadata: z
      .record(z.string(), z.unknown())
      .describe('Sanitized details; never holds a secret, token, credential or run input value.'),
    created_at: timestampSchema.describe('When the record was written (ISO 8601).'),
  })
  .describe('Durable event record of organization activity or security-audit history.');

export const eventSorts = ['event_occurred_at'] as const;

export const listEventsQuery = listQuerySchema(eventSorts)
  .extend({
    action: z.enum(eventActions).optional().describe('Only events with this action.'),
    actor_slug: slugSchema.optional().describe('Only events whose actor has this slug.'),
    actor_type: z.enum(actorTypes).optional().describe('Only events of this actor type.'),
    entity_slug: slugSchema.optional().describe('Only events about the entity with this slug.'),
    entity_type: z.enum(entityTypes).optional().describe('Only events about this entity type.'),
    occurred_from: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Only events that occurred at or after this instant (inclusive, ISO 8601).'),
    occurred_before: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Only events that occurred strictly before this instant (exclusive, ISO 8601).'),
    request_id: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('Only events caused by the request with this correlation id (1 to 255 characters).'),
  })
  .strict();

export type ListEventsQuery = z.infer<typeof listEventsQuery>;

export const eventListSchema = z
  .object({
    events: z.array(eventSchema).describe('The page of event records.'),
    ...pageMeta,
    event_log_retention_days: z
      .number()
      .int()
      .min(1)
      .max(30)
      .nullable()
      .describe(
        'Online retention boundary in days: records older than this are removed. Set on security-audit lists, null on activity lists.',
      ),
  })
  .describe('A page of event records.');

export const eventParams = orgParams;
