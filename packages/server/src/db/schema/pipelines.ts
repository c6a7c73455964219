import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
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
import { dataSources, environments, projects } from './connections';
import { organizations } from './organizations';

const orgRef = () =>
  uuid('organization_id')
    .notNull()
    .references(() => organizations.id, { onDelete: 'cascade' });
const pipelineRef = () =>
  uuid('pipeline_id')
    .notNull()
    .references(() => pipelines.id, { onDelete: 'cascade' });
const environmentRef = () =>
  uuid('environment_id')
    .notNull()
    .references(() => environments.id, { onDelete: 'cascade' });

export type FindingRecord = { code: string; message: string; path: string; severity: 'error' | 'warning' };
export type ErrorRecord = { code: string; message: string };

export const pipelines = pgTable(
  'pipelines',
  {
    id: id(),
    organizationId: orgRef(),
    projectId: uuid('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('pipelines_project_slug_uq').on(t.projectId, t.slug)],
);

/** Immutable specs; (pipeline, spec_hash) is the version's identity. */
export const pipelineVersions = pgTable(
  'pipeline_versions',
  {
    id: id(),
    organizationId: orgRef(),
    pipelineId: pipelineRef(),
    specHash: text('spec_hash').notNull(),
    spec: jsonb('spec').$type<Record<string, unknown>>().notNull(),
    createdByActorType: text('created_by_actor_type'),
    createdByActorSlug: text('created_by_actor_slug'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('pipeline_versions_uq').on(t.pipelineId, t.specHash)],
);

export const dataSourceRefs = pgTable(
  'data_source_refs',
  {
    id: id(),
    organizationId: orgRef(),
    pipelineId: pipelineRef(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    dataSourceType: text('data_source_type'),
    requiredCapabilities: jsonb('required_capabilities')
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    ...timestamps(),
  },
  (t) => [uniqueIndex('data_source_refs_uq').on(t.pipelineId, t.slug)],
);

export const dataSourceBindings = pgTable(
  'data_source_bindings',
  {
    id: id(),
    organizationId: orgRef(),
    pipelineId: pipelineRef(),
    refId: uuid('ref_id')
      .notNull()
      .references(() => dataSourceRefs.id, { onDelete: 'cascade' }),
    environmentId: environmentRef(),
    dataSourceId: uuid('data_source_id')
      .notNull()
      .references(() => dataSources.id, { onDelete: 'restrict' }),
    boundAt: ts('bound_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('data_source_bindings_uq').on(t.refId, t.environmentId)],
);

export const pipelineValidations = pgTable(
  'pipeline_validations',
  {
    id: id(),
    organizationId: orgRef(),
    pipelineId: pipelineRef(),
    environmentId: environmentRef(),
    slug: text('slug').notNull(),
    specHash: text('spec_hash').notNull(),
    valid: boolean('valid').notNull(),
    findings: jsonb('findings').$type<FindingRecord[]>().notNull().default(sql`'[]'::jsonb`),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('pipeline_validations_slug_uq').on(t.organizationId, t.slug),
    index('pipeline_validations_lookup_idx').on(t.pipelineId, t.environmentId, t.specHash),
  ],
);

export const pipelineDeployments = pgTable(
  'pipeline_deployments',
  {
    id: id(),
    organizationId: orgRef(),
    pipelineId: pipelineRef(),
    environmentId: environmentRef(),
    slug: text('slug').notNull(),
    specHash: text('spec_hash').notNull(),
    validationId: uuid('validation_id').references(() => pipelineValidations.id, { onDelete: 'set null' }),
    /** The deployment runs use; older ones stay as history. */
    active: boolean('active').notNull().default(true),
    deployedByActorType: text('deployed_by_actor_type'),
    deployedByActorSlug: text('deployed_by_actor_slug'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('pipeline_deployments_slug_uq').on(t.organizationId, t.slug),
    index('pipeline_deployments_env_idx').on(t.pipelineId, t.environmentId, t.createdAt),
  ],
);

export const pipelineRuns = pgTable(
  'pipeline_runs',
  {
    id: id(),
    organizationId: orgRef(),
    pipelineId: pipelineRef(),
    environmentId: environmentRef(),
    slug: text('slug').notNull(),
    specHash: text('spec_hash').notNull(),
    state: text('state').notNull().default('queued'),
    trigger: text('trigger').notNull().default('api'),
    // Set for runs a pipeline trigger started; trigger_key is the nominal time or delivery id.
    triggerId: uuid('trigger_id'),
    triggerSlug: text('trigger_slug'),
    triggerKey: text('trigger_key'),
    inputKeys: jsonb('input_keys').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    error: jsonb('error').$type<ErrorRecord | null>(),
    /** Quality metrics measured at contracted sinks (docs/drift-and-contracts.md#contracts). */
    contractChecks: jsonb('contract_checks')
      .$type<Record<string, unknown>[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    attempt: integer('attempt').notNull().default(1),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: ts('lease_expires_at'),
    heartbeatAt: ts('heartbeat_at'),
    cancelRequestedAt: ts('cancel_requested_at'),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('pipeline_runs_slug_uq').on(t.organizationId, t.slug),
    // The runs list (newest first, slug as tiebreak) and each of its filters read one index in
    // order and stop after a page, however many runs the environment holds.
    index('pipeline_runs_env_idx').on(t.environmentId, t.createdAt, t.slug),
    index('pipeline_runs_pipeline_idx').on(t.pipelineId, t.environmentId, t.createdAt, t.slug),
    index('pipeline_runs_state_idx').on(t.environmentId, t.state, t.createdAt, t.slug),
    index('pipeline_runs_trigger_idx').on(t.environmentId, t.trigger, t.createdAt, t.slug),
    index('pipeline_runs_trigger_slug_idx').on(t.environmentId, t.triggerSlug, t.createdAt, t.slug),
    index('pipeline_runs_lease_idx').on(t.state, t.leaseExpiresAt),
    // One run per schedule occurrence or webhook delivery, whatever host or retry inserts it.
    uniqueIndex('pipeline_runs_trigger_key_uq').on(t.triggerId, t.triggerKey),
  ],
);

/** A run's input values, sealed, only until the run ends (docs/runs.md#executing). */
export const pipelineRunInputs = pgTable('pipeline_run_inputs', {
  id: id(),
  organizationId: orgRef(),
  runId: uuid('run_id')
    .notNull()
    .unique()
    .references(() => pipelineRuns.id, { onDelete: 'cascade' }),
  kid: text('kid').notNull(),
  ciphertext: text('ciphertext').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

export const pipelineRunSteps = pgTable(
  'pipeline_run_steps',
  {
    id: id(),
    runId: uuid('run_id')
      .notNull()
      .references(() => pipelineRuns.id, { onDelete: 'cascade' }),
    stepSlug: text('step_slug').notNull(),
    state: text('state').notNull().default('pending'),
    rowsIn: bigint('rows_in', { mode: 'number' }).notNull().default(0),
    rowsOut: bigint('rows_out', { mode: 'number' }).notNull().default(0),
    bytesIn: bigint('bytes_in', { mode: 'number' }).notNull().default(0),
    bytesOut: bigint('bytes_out', { mode: 'number' }).notNull().default(0),
    error: jsonb('error').$type<ErrorRecord | null>(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [uniqueIndex('pipeline_run_steps_uq').on(t.runId, t.stepSlug)],
);

/**
 * One element of `pipeline_run_logs.lines`: the step, the level, the message and the line's time
 * in milliseconds after the batch's `at`.
 */
export type StoredLogLine = [stepSlug: string | null, level: string, message: string, afterMs: number];

/** The most lines one row of `pipeline_run_logs` holds (its check constraint says so too). */
export const LOG_BATCH_LINES = 500;

// A run's log lines, stored in batches: a row holds up to LOG_BATCH_LINES consecutive lines of
// one run (numbers `seq` to `last_seq`), as one insert wrote them (docs/operations.md#run-logs).
// Range-partitioned by `at`, the batch's first line's time, one partition a month (declared by
// hand in migrations 0017 and 0018; docs/operations.md#history-partitions): old months are
// dropped whole by retention. The primary key includes `at`, as a partitioned table requires.
export const pipelineRunLogs = pgTable(
  'pipeline_run_logs',
  {
    runId: uuid('run_id')
      .notNull()
      .references(() => pipelineRuns.id, { onDelete: 'cascade' }),
    /** The number of the batch's first line in its run (1, 2, …): the API shows line numbers. */
    seq: integer('seq').notNull(),
    /** The number of its last line. */
    lastSeq: integer('last_seq').notNull(),
    at: ts('at').notNull().defaultNow(),
    lines: jsonb('lines').$type<StoredLogLine[]>().notNull(),
  },
  (t) => [
    primaryKey({ name: 'pipeline_run_logs_pkey', columns: [t.runId, t.seq, t.at] }),
    check(
      'pipeline_run_logs_batch',
      sql`${t.lastSeq} >= ${t.seq} and ${t.lastSeq} - ${t.seq} < 500 and jsonb_array_length(${t.lines}) = ${t.lastSeq} - ${t.seq} + 1`,
    ),
  ],
);

/** Incremental cursors per source step; advanced only after every sink of a run committed. */
export const pipelineCheckpoints = pgTable(
  'pipeline_checkpoints',
  {
    id: id(),
    organizationId: orgRef(),
    pipelineId: pipelineRef(),
    environmentId: environmentRef(),
    stepSlug: text('step_slug').notNull(),
    cursor: text('cursor'),
    runId: uuid('run_id').references(() => pipelineRuns.id, { onDelete: 'set null' }),
    ...timestamps(),
  },
  (t) => [uniqueIndex('pipeline_checkpoints_uq').on(t.pipelineId, t.environmentId, t.stepSlug)],
);
