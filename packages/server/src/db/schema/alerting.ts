import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { id, timestamps, ts } from './columns';
import { organizations } from './organizations';

// Alerting (docs/alerting.md): notifications (one per organization and dedup key), the source
// events each one counted, destinations, policies, the per-destination send gates that make a
// send decision claimable by exactly one worker, and one delivery attempt row per try.

const orgRef = () =>
  uuid('organization_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });

export type SourceRef = { kind: string; value: string };

export const notifications = pgTable(
  'notifications',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    dedupKey: text('dedup_key').notNull(),
    notificationType: text('notification_type').notNull(),
    severity: text('severity').notNull(),
    lifecycleState: text('lifecycle_state').notNull(),
    title: text('title').notNull(),
    summary: text('summary').notNull(),
    projectSlug: text('project_slug'),
    environmentSlug: text('environment_slug'),
    sourceKind: text('source_kind').notNull(),
    sourceAction: text('source_action').notNull(),
    sourceRefs: jsonb('source_refs').$type<SourceRef[]>().notNull().default(sql`'[]'::jsonb`),
    occurrenceCount: integer('occurrence_count').notNull().default(1),
    reopenCount: integer('reopen_count').notNull().default(0),
    /** Occurrences since the episode opened; drives escalation ("3 failures in a row"). */
    streak: integer('streak').notNull().default(1),
    /** Bumped on every send-worthy transition (open, reopen, escalation); gates compare it. */
    alertSeq: integer('alert_seq').notNull().default(1),
    firstSeenAt: ts('first_seen_at').notNull(),
    lastSeenAt: ts('last_seen_at').notNull(),
    acknowledgedAt: ts('acknowledged_at'),
    resolvedAt: ts('resolved_at'),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('notifications_org_slug_uq').on(t.organizationId, t.slug),
    uniqueIndex('notifications_org_dedup_uq').on(t.organizationId, t.dedupKey),
    index('notifications_org_seen_idx').on(t.organizationId, t.lastSeenAt),
  ],
);

/** Each source event counts once: a redelivered job finds its key here and changes nothing. */
export const notificationOccurrences = pgTable(
  'notification_occurrences',
  {
    notificationId: uuid('notification_id')
      .notNull()
      .references(() => notifications.id, { onDelete: 'cascade' }),
    sourceKey: text('source_key').notNull(),
    occurredAt: ts('occurred_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.notificationId, t.sourceKey] })],
);

export const alertDestinations = pgTable(
  'alert_destinations',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    nonSecretConfig: jsonb('non_secret_config').$type<{ recipients: string[] }>().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    ...timestamps(),
  },
  (t) => [uniqueIndex('alert_destinations_org_slug_uq').on(t.organizationId, t.slug)],
);

export const alertPolicies = pgTable(
  'alert_policies',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    scope: text('scope').notNull(),
    projectSlug: text('project_slug'),
    environmentSlug: text('environment_slug'),
    notificationType: text('notification_type'),
    severity: text('severity'),
    lifecycleState: text('lifecycle_state'),
    sourceKind: text('source_kind'),
    sourceAction: text('source_action'),
    sourceRef: text('source_ref'),
    enabled: boolean('enabled').notNull().default(true),
    ...timestamps(),
  },
  (t) => [uniqueIndex('alert_policies_org_slug_uq').on(t.organizationId, t.slug)],
);

/** A policy's destinations; `no action` is what refuses deleting a destination still in use. */
export const alertPolicyDestinations = pgTable(
  'alert_policy_destinations',
  {
    policyId: uuid('policy_id')
      .notNull()
      .references(() => alertPolicies.id, { onDelete: 'cascade' }),
    destinationId: uuid('destination_id')
      .notNull()
      .references(() => alertDestinations.id, { onDelete: 'no action' }),
    position: integer('position').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.policyId, t.destinationId] }),
    index('alert_policy_destinations_dest_idx').on(t.destinationId),
  ],
);

/** Last send per (notification, destination), claimed with one conditional upsert. */
export const alertSendGates = pgTable(
  'alert_send_gates',
  {
    notificationId: uuid('notification_id')
      .notNull()
      .references(() => notifications.id, { onDelete: 'cascade' }),
    destinationId: uuid('destination_id')
      .notNull()
      .references(() => alertDestinations.id, { onDelete: 'cascade' }),
    lastSeq: integer('last_seq').notNull(),
    lastSentAt: timestamp('last_sent_at', { withTimezone: true, precision: 3, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.notificationId, t.destinationId] })],
);

/** The hourly cap per destination: messages counted and held back in the current window. */
export const alertDestinationWindows = pgTable('alert_destination_windows', {
  destinationId: uuid('destination_id')
    .primaryKey()
    .references(() => alertDestinations.id, { onDelete: 'cascade' }),
  windowStart: ts('window_start').notNull(),
  sent: integer('sent').notNull().default(0),
  heldBack: integer('held_back').notNull().default(0),
});

export const alertDeliveryAttempts = pgTable(
  'alert_delivery_attempts',
  {
    id: id(),
    organizationId: orgRef(),
    slug: text('slug').notNull(),
    notificationId: uuid('notification_id')
      .notNull()
      .references(() => notifications.id, { onDelete: 'cascade' }),
    /** The tries of one send decision share it (and the message's thread position). */
    deliveryId: uuid('delivery_id').notNull(),
    destinationId: uuid('destination_id').references(() => alertDestinations.id, { onDelete: 'set null' }),
    alertPolicySlug: text('alert_policy_slug'),
    destinationSlug: text('destination_slug'),
    destinationName: text('destination_name'),
    destinationType: text('destination_type').notNull(),
    /** What the message says: the alert itself, a repeat, an escalation or a recovery. */
    reason: text('reason').notNull(),
    heldBack: integer('held_back').notNull().default(0),
    status: text('status').notNull(),
    providerAttempt: integer('provider_attempt').notNull(),
    providerResponseMetadata: jsonb('provider_response_metadata')
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    errorCategory: text('error_category'),
    errorMessage: text('error_message'),
    queuedAt: ts('queued_at').notNull(),
    sentAt: ts('sent_at'),
    failedAt: ts('failed_at'),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('alert_delivery_attempts_org_slug_uq').on(t.organizationId, t.slug),
    uniqueIndex('alert_delivery_attempts_try_uq').on(t.deliveryId, t.providerAttempt),
    index('alert_delivery_attempts_notification_idx').on(t.notificationId, t.createdAt),
  ],
);
