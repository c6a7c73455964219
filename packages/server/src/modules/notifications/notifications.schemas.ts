import { z } from 'zod';
import { nullableTimestampSchema, orgSlugParam, slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { entityTypes, eventActions } from '../events/index';

// Notification vocabulary (docs/alerting.md#notifications).
export const notificationTypes = [
  'pipeline_run_failed',
  'pipeline_run_recovered',
  'pipeline_trigger_failed',
  'data_source_test_failed',
  'credential_failed',
  'schema_import_failed',
  'schema_drift_detected',
  'alert_delivery_failed',
  'cdc_capture_lagging',
  'cdc_capture_inactive',
] as const;
export type NotificationType = (typeof notificationTypes)[number];

/** In rising order: severity only ever moves right within an episode. */
export const severities = ['info', 'warning', 'error', 'critical'] as const;
export type Severity = (typeof severities)[number];
export const severityRank = (s: string) => severities.indexOf(s as Severity);

export const lifecycleStates = ['open', 'acknowledged', 'resolved'] as const;
export type LifecycleState = (typeof lifecycleStates)[number];

export const notificationTypeSchema = z.enum(notificationTypes).describe('What happened.');
export const severitySchema = z.enum(severities).describe('info < warning < error < critical.');
export const lifecycleStateSchema = z
  .enum(lifecycleStates)
  .describe('open → acknowledged → resolved; a new occurrence of a resolved one reopens it.');
export const entityTypeSchema = z.enum(entityTypes).describe('Entity type (see Events).');
export const eventActionSchema = z.enum(eventActions).describe('Event action (see Events).');

export const sourceRefSchema = z
  .object({
    kind: z
      .string()
      .describe('What the slug names: pipeline, data_source, data_source_ref, trigger, destination …'),
    value: slugSchema.describe('The stable slug involved.'),
  })
  .describe('A stable resource the notification is about.');

export const notificationSchema = z
  .object({
    slug: slugSchema,
    notification_type: notificationTypeSchema,
    severity: severitySchema,
    lifecycle_state: lifecycleStateSchema,
    title: z.string().describe('One line saying what broke.'),
    summary: z.string().describe('The latest occurrence in a sentence or two (sanitized).'),
    project_slug: slugSchema.nullable().describe('Project of the subject, or null for organization-level.'),
    environment_slug: slugSchema.nullable().describe('Environment of the subject, or null.'),
    source_kind: entityTypeSchema.describe('Entity type of the event that raised it.'),
    source_action: eventActionSchema.describe('Action of the event that raised it.'),
    source_refs: z
      .array(sourceRefSchema)
      .describe('The stable slugs involved; a policy source_ref matches any of their values.'),
    occurrence_count: z.number().int().min(1).describe('Source events counted, each once.'),
    reopen_count: z.number().int().min(0).describe('Times a new occurrence reopened it after resolution.'),
    first_seen_at: timestampSchema.describe('First occurrence.'),
    last_seen_at: timestampSchema.describe('Latest occurrence.'),
    acknowledged_at: nullableTimestampSchema.describe('When it was acknowledged in its current episode.'),
    resolved_at: nullableTimestampSchema.describe('When it was resolved, or null while open.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('A notification: one per organization and dedup key (type, project/environment, subject).');

export const notificationParams = z
  .object({ organization: orgSlugParam, notification_slug: slugSchema })
  .strict();

export const notificationSorts = ['notification_last_seen_at'] as const;
export const listNotificationsQuery = listQuerySchema(notificationSorts).extend({
  project_slug: slugSchema.optional().describe('Only notifications of this project.'),
  environment_slug: slugSchema.optional().describe('Only notifications of this environment.'),
  lifecycle_state: lifecycleStateSchema.optional().describe('Only notifications in this state.'),
  notification_type: notificationTypeSchema.optional().describe('Only notifications of this type.'),
  severity: severitySchema.optional().describe('Only notifications of this severity.'),
});
export type NotificationFilters = z.infer<typeof listNotificationsQuery>;
export const notificationListSchema = listResponseSchema('notifications', notificationSchema);
