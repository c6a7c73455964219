import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { id, timestamps, ts } from './columns';
import { environments } from './connections';
import { organizations } from './organizations';
import { pipelineRuns, pipelines } from './pipelines';

// Pipeline triggers (docs/triggers.md): schedules fired by the tick, webhooks fired by signed
// deliveries. The occurrence ledger and the delivery list are the "why did / didn't it fire".

export const pipelineTriggers = pgTable(
  'pipeline_triggers',
  {
    id: id(),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    pipelineId: uuid('pipeline_id')
      .notNull()
      .references(() => pipelines.id, { onDelete: 'cascade' }),
    environmentId: uuid('environment_id')
      .notNull()
      .references(() => environments.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    kind: text('kind').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    paused: boolean('paused').notNull().default(false),
    pauseNote: text('pause_note'),
    // schedule kind
    cron: text('cron'),
    timeZone: text('time_zone'),
    overlap: text('overlap'),
    catchUpPolicy: text('catch_up_policy'),
    catchUpWindowSeconds: integer('catch_up_window_seconds'),
    catchUpMaxRuns: integer('catch_up_max_runs'),
    jitterSeconds: integer('jitter_seconds'),
    startAt: ts('start_at'),
    endAt: ts('end_at'),
    /** Last nominal time the tick has decided (started or recorded a skip); the next is after it. */
    cursorNominalAt: ts('cursor_nominal_at'),
    /** Jittered fire time of the next nominal time after the cursor; null when none is left. */
    nextFireAt: ts('next_fire_at'),
    /** buffer_one: the nominal time waiting for the active run to finish. */
    bufferedNominalAt: ts('buffered_nominal_at'),
    // webhook kind
    inputMapping: jsonb('input_mapping').$type<Record<string, string>>(),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('pipeline_triggers_place_slug_uq').on(t.pipelineId, t.environmentId, t.slug),
    // The public delivery route names only the slug.
    uniqueIndex('pipeline_triggers_webhook_slug_uq').on(t.slug).where(sql`kind = 'webhook'`),
    uniqueIndex('pipeline_triggers_org_slug_uq').on(t.organizationId, t.slug),
    index('pipeline_triggers_due_idx').on(t.nextFireAt).where(sql`kind = 'schedule' and enabled`),
  ],
);

export const pipelineTriggerSecrets = pgTable(
  'pipeline_trigger_secrets',
  {
    id: id(),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    triggerId: uuid('trigger_id')
      .notNull()
      .references(() => pipelineTriggers.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    prefix: text('prefix').notNull(),
    kid: text('kid').notNull(),
    ciphertext: text('ciphertext').notNull(),
    expiresAt: ts('expires_at'),
    lastVerifiedAt: ts('last_verified_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('pipeline_trigger_secrets_trigger_idx').on(t.triggerId)],
);

export const pipelineTriggerOccurrences = pgTable(
  'pipeline_trigger_occurrences',
  {
    triggerId: uuid('trigger_id')
      .notNull()
      .references(() => pipelineTriggers.id, { onDelete: 'cascade' }),
    nominalAt: ts('nominal_at').notNull(),
    fireAt: ts('fire_at').notNull(),
    outcome: text('outcome').notNull(),
    reason: text('reason'),
    runId: uuid('run_id').references(() => pipelineRuns.id, { onDelete: 'set null' }),
    slug: text('slug').notNull(),
    recordedAt: ts('recorded_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.triggerId, t.nominalAt] })],
);

export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: id(),
    triggerId: uuid('trigger_id')
      .notNull()
      .references(() => pipelineTriggers.id, { onDelete: 'cascade' }),
    deliveryId: text('delivery_id').notNull(),
    bodySha256: text('body_sha256').notNull(),
    inputKeys: jsonb('input_keys').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    outcome: text('outcome').notNull(),
    runId: uuid('run_id').references(() => pipelineRuns.id, { onDelete: 'set null' }),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('webhook_deliveries_uq').on(t.triggerId, t.deliveryId)],
);
