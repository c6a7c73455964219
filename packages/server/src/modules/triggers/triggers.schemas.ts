import { z } from 'zod';
import {
  nameSchema,
  nullableTimestampSchema,
  slugSchema,
  storedNameSchema,
  timestampSchema,
} from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { confirmationField } from '../environments/index';
import { INPUT_KEY, pipelineParams } from '../runs/index';
import { MAX_JITTER_SECONDS } from './schedule-calc';

// Pipeline triggers (docs/triggers.md).

export const triggerKinds = ['schedule', 'webhook'] as const;
export const overlapPolicies = ['skip', 'buffer_one', 'allow'] as const;
export const catchUpPolicies = ['latest', 'skip', 'all'] as const;
export const occurrenceOutcomes = [
  'started',
  'buffered',
  'skipped_overlap',
  'skipped_catch_up',
  'skipped_paused',
  'failed',
] as const;
export const MAX_PREVIOUS_VALID_SECONDS = 7 * 86400;

const isoInstant = z.iso.datetime({ offset: true }).describe('ISO 8601 date-time with offset.');

export const catchUpSchema = z
  .object({
    policy: z
      .enum(catchUpPolicies)
      .default('latest')
      .describe(
        'What to do with occurrences missed while no scheduler ran: latest (start only the newest), skip (start none), all (start each, oldest first, up to max_runs).',
      ),
    window_seconds: z
      .number()
      .int()
      .min(0)
      .max(366 * 86400)
      .default(86400)
      .describe(
        'Occurrences older than this are recorded as skipped_catch_up, never started (default 86400).',
      ),
    max_runs: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(10)
      .describe('policy all: at most this many (default 10).'),
  })
  .strict()
  .describe('Catch-up after downtime.');

const scheduleFields = {
  cron: z
    .string()
    .min(9)
    .max(200)
    .describe('Cron expression, exactly 5 fields (minute hour day-of-month month day-of-week).'),
  time_zone: z
    .string()
    .min(1)
    .max(64)
    .describe('IANA time zone the cron is read in, e.g. Europe/Berlin or UTC.'),
  overlap: z
    .enum(overlapPolicies)
    .describe('When the previous run of this trigger is still active: skip (default), buffer_one, allow.'),
  catch_up: catchUpSchema,
  jitter_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_JITTER_SECONDS)
    .describe(
      'Deterministic delay per occurrence, 0 to this many seconds, always before the next occurrence.',
    ),
  start_at: isoInstant.nullable().describe('No occurrence before this instant (null: none).'),
  end_at: isoInstant.nullable().describe('No occurrence at or after this instant (null: none).'),
};

export const scheduleInput = z
  .object({
    cron: scheduleFields.cron,
    time_zone: scheduleFields.time_zone,
    overlap: scheduleFields.overlap.default('skip'),
    catch_up: catchUpSchema.default({ policy: 'latest', window_seconds: 86400, max_runs: 10 }),
    jitter_seconds: scheduleFields.jitter_seconds.default(0),
    start_at: scheduleFields.start_at.default(null),
    end_at: scheduleFields.end_at.default(null),
  })
  .strict()
  .describe(
    'Schedule settings (kind schedule). Carries no input values: a scheduled run has an empty input.',
  );

export const schedulePatch = z
  .object({
    cron: scheduleFields.cron.optional(),
    time_zone: scheduleFields.time_zone.optional(),
    overlap: scheduleFields.overlap.optional(),
    catch_up: catchUpSchema.optional(),
    jitter_seconds: scheduleFields.jitter_seconds.optional(),
    start_at: scheduleFields.start_at.optional(),
    end_at: scheduleFields.end_at.optional(),
  })
  .strict()
  .describe('Schedule fields to change.');

export const inputMappingSchema = z
  .record(
    z.string().regex(INPUT_KEY, 'must match ^[A-Za-z_][A-Za-z0-9_]*$').max(100),
    z
      .string()
      .max(500)
      .regex(/^(\/.*)?$/, 'must be a JSON Pointer (RFC 6901), e.g. /order/id'),
  )
  .describe(
    'Run input key → JSON Pointer into the delivery body. Values are passed to the run, never stored.',
  );

export const webhookInput = z
  .object({ input_mapping: inputMappingSchema.default({}) })
  .strict()
  .describe('Webhook settings (kind webhook).');

const common = {
  name: nameSchema,
  description: z.string().max(2000).nullable().describe('Free text, up to 2000 characters.'),
  enabled: z.boolean().describe('A disabled trigger never fires and records nothing.'),
  paused: z.boolean().describe('A paused trigger records every missed occurrence as skipped_paused.'),
  pause_note: z.string().max(2000).nullable().describe('Why it is paused (shown with the trigger).'),
};

const createCommon = {
  slug: slugSchema
    .optional()
    .describe('Optional slug; webhook slugs are unique in the deployment (409 if taken).'),
  name: common.name,
  description: common.description.optional(),
  enabled: common.enabled.optional(),
  paused: common.paused.optional(),
  pause_note: common.pause_note.optional(),
  protected_environment_confirmation: confirmationField,
};

// `kind` picks the member: a schedule trigger carries `schedule` and no `webhook`, a webhook
// trigger the reverse (an unknown field is 400 like every other).
export const createTriggerBody = z
  .discriminatedUnion('kind', [
    z
      .object({
        ...createCommon,
        kind: z.literal('schedule').describe('A trigger that fires on a cron schedule.'),
        schedule: scheduleInput,
      })
      .strict()
      .describe('A new schedule trigger.'),
    z
      .object({
        ...createCommon,
        kind: z.literal('webhook').describe('A trigger that fires on a signed webhook delivery.'),
        webhook: webhookInput,
      })
      .strict()
      .describe('A new webhook trigger.'),
  ])
  .describe('A new trigger: `schedule` for kind schedule, `webhook` for kind webhook.');

export const updateTriggerBody = z
  .object({
    name: common.name.optional(),
    description: common.description.optional(),
    enabled: common.enabled.optional(),
    paused: common.paused.optional(),
    pause_note: common.pause_note.optional(),
    schedule: schedulePatch.optional(),
    webhook: z
      .object({ input_mapping: inputMappingSchema.optional() })
      .strict()
      .optional()
      .describe('Webhook fields.'),
    protected_environment_confirmation: confirmationField,
  })
  .strict()
  .describe(
    'Fields to change; pause with {"paused": true, "pause_note": "..."}, resume with {"paused": false}.',
  );

export const rotateSecretBody = z
  .object({
    previous_valid_for_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_PREVIOUS_VALID_SECONDS)
      .default(86400)
      .describe(
        'How long the current secret keeps verifying (default 86400; 0 after a leak; at most 7 days).',
      ),
    protected_environment_confirmation: confirmationField,
  })
  .strict()
  .nullish()
  .describe('Secret rotation.');

export const dryRunQuery = z
  .object({
    dry_run: z
      .enum(['true', 'false'])
      .optional()
      .describe('true: validate and answer the next 10 fire times without saving.'),
    protected_environment_confirmation: slugSchema
      .optional()
      .describe('Exact slug of the environment, required when it is protected.'),
  })
  .strict();

export const triggerParams = pipelineParams.extend({ pipeline_trigger_slug: slugSchema }).strict();

const secretSchema = z
  .object({
    id: z.string().describe('Identifier of the secret.'),
    prefix: z.string().describe('First characters of the secret, to tell them apart.'),
    created_at: timestampSchema,
    expires_at: nullableTimestampSchema.describe('When it stops verifying (null: current secret).'),
    last_verified_at: nullableTimestampSchema.describe('Last delivery it verified, or null.'),
  })
  .describe('A webhook signing secret (never its value).');

const occurrenceSummary = z
  .object({
    nominal_at: timestampSchema.describe('Schedule time (or, for a webhook, when the delivery arrived).'),
    fire_at: timestampSchema.describe('When it fired or was decided (nominal time plus jitter).'),
    outcome: z.enum(occurrenceOutcomes).describe('What happened.'),
    reason: z.string().nullable().describe('Why, for anything but started.'),
    run_slug: slugSchema.nullable().describe('Run it started, or null.'),
  })
  .describe('The latest occurrence.');

export const triggerSchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    kind: z.enum(triggerKinds).describe('schedule or webhook.'),
    pipeline_slug: slugSchema.describe('Pipeline it runs (its deployed version).'),
    environment_slug: slugSchema.describe('Environment it runs in.'),
    enabled: common.enabled,
    paused: common.paused,
    pause_note: common.pause_note,
    description: common.description,
    schedule: z
      .object({
        cron: scheduleFields.cron,
        time_zone: scheduleFields.time_zone,
        overlap: scheduleFields.overlap,
        catch_up: z
          .object({
            policy: z.enum(catchUpPolicies).describe('latest, skip or all.'),
            window_seconds: z.number().int().describe('Catch-up window in seconds.'),
            max_runs: z.number().int().describe('Cap for policy all.'),
          })
          .describe('Catch-up after downtime.'),
        jitter_seconds: z.number().int().describe('Deterministic jitter bound in seconds.'),
        start_at: nullableTimestampSchema.describe('No occurrence before this instant.'),
        end_at: nullableTimestampSchema.describe('No occurrence at or after this instant.'),
      })
      .nullable()
      .describe('Schedule settings (kind schedule), else null.'),
    webhook: z
      .object({
        delivery_path: z.string().describe('Path senders POST to, with {delivery_id} to fill in.'),
        secrets: z.array(secretSchema).describe('Live secrets, newest first (at most two).'),
        input_mapping: inputMappingSchema,
      })
      .nullable()
      .describe('Webhook settings (kind webhook), else null.'),
    last_occurrence: occurrenceSummary.nullable().describe('Latest occurrence or delivery, or null.'),
    next_fire_times: z
      .array(timestampSchema)
      .describe('Next 5 fire times, UTC (empty for webhooks, disabled or paused triggers).'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('A pipeline trigger.');

export const triggerWithSecretSchema = triggerSchema
  .extend({
    secret: z
      .string()
      .describe('The new signing secret (`whsec_` + base64). Shown only in this response; store it now.'),
  })
  .describe('A webhook trigger with its new signing secret.');

export const previewSchema = z
  .object({
    dry_run: z.literal(true).describe('Nothing was saved.'),
    valid: z.literal(true).describe('The trigger would be accepted.'),
    time_zone: z.string().nullable().describe('Zone the times are local to (null for webhooks).'),
    tz_version: z
      .string()
      .describe('Time-zone rules version of the server (zone rules change with upgrades).'),
    next_fire_times: z
      .array(
        z.object({
          nominal_at: timestampSchema.describe('Schedule time, UTC.'),
          fire_at: timestampSchema.describe('With jitter, UTC.'),
          local_time: z.string().describe('Schedule time in the zone, with its offset.'),
          dst: z
            .enum(['none', 'gap_shifted', 'repeated'])
            .describe(
              'gap_shifted: moved to the end of a DST gap; repeated: a wall time that occurs twice that day.',
            ),
        }),
      )
      .describe('Next 10 occurrences.'),
  })
  .describe('Dry run: what the trigger would do.');

export const triggerSorts = ['pipeline_trigger_created_at'] as const;
export const listTriggersQuery = listQuerySchema(triggerSorts);
export const triggerListSchema = listResponseSchema('pipeline_triggers', triggerSchema);

export const occurrenceSchema = occurrenceSummary.describe('One decided occurrence of a schedule.');
export const occurrenceSorts = ['occurrence_nominal_at'] as const;
export const listOccurrencesQuery = listQuerySchema(occurrenceSorts)
  .extend({ outcome: z.enum(occurrenceOutcomes).optional().describe('Only this outcome.') })
  .strict();
export const occurrenceListSchema = listResponseSchema('occurrences', occurrenceSchema);
