import { z } from 'zod';
import { nullableTimestampSchema, orgSlugParam, slugSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

// Capture status as the API shows it (docs/cdc.md "Slot safety").

export const captureNameSchema = z
  .string()
  .regex(
    /^sluice_[a-z0-9_]{1,56}$/,
    'must be a capture name: sluice_ followed by lowercase letters, digits or _',
  )
  .describe(
    'Capture name: the replication slot and publication name on PostgreSQL (`sluice_` and 24 hex digits).',
  );

const statusFields = {
  capture_name: captureNameSchema,
  lag_bytes: z
    .number()
    .int()
    .nullable()
    .describe(
      'Bytes of log the source keeps for this capture (PostgreSQL: WAL from the slot restart_lsn to the current position); null when unknown.',
    ),
  confirmed_position: z
    .string()
    .nullable()
    .describe(
      'The last position the source confirmed for the capture (PostgreSQL: the slot confirmed_flush_lsn); null when unknown.',
    ),
  wal_status: z
    .string()
    .nullable()
    .describe('PostgreSQL 13+: the slot wal_status (reserved, extended, unreserved, lost); null elsewhere.'),
  safe_wal_bytes: z
    .number()
    .int()
    .nullable()
    .describe(
      'PostgreSQL 13+: bytes the slot may still fall behind before max_slot_wal_keep_size invalidates it; null without that limit.',
    ),
};

export const captureOwnerSchema = z
  .object({
    project_slug: slugSchema.describe('Project of the pipeline.'),
    pipeline_slug: slugSchema.describe('Pipeline whose deployment owns the capture.'),
    environment_slug: slugSchema.describe('Environment of that deployment.'),
    step_slug: slugSchema.describe('The cdc source step.'),
  })
  .describe('The deployed pipeline step that owns the capture.');

export const pipelineCaptureSchema = z
  .object({
    step_slug: slugSchema.describe('The cdc source step.'),
    environment_slug: slugSchema.describe('Environment where the pipeline is deployed.'),
    data_source_slug: slugSchema.describe('Data source the step reads, as bound in that environment.'),
    ...statusFields,
    active: z
      .boolean()
      .nullable()
      .describe(
        "A run is reading the capture right now, or a session that is not Sluice's is attached (a worker's idle kept session is not counted); null when unknown.",
      ),
    status: z
      .enum(['ok', 'missing', 'unreachable'])
      .describe(
        'ok: the source reported the capture; missing: the source has no such capture (not created yet: no run since the deployment, or dropped); unreachable: the source could not be asked (see error).',
      ),
    error: z
      .object({
        code: z.string().describe('The connector error code, e.g. CONNECTION_FAILED.'),
        message: z.string().describe('Sanitized message.'),
      })
      .nullable()
      .describe('Why the status could not be read; null when it was.'),
    last_checkpoint_at: nullableTimestampSchema.describe(
      'When a run last committed the step position (its checkpoint); null before the first.',
    ),
    retention_expires_at: nullableTimestampSchema.describe(
      'MySQL/MariaDB: the earliest time the server binlog retention (binlog_expire_logs_seconds / expire_logs_days) may purge the binlog holding the committed position (the last checkpoint plus the retention); null while that binlog is the one being written, without retention, and on PostgreSQL.',
    ),
  })
  .describe('A change data capture of a deployed pipeline step in an environment.');

export const dataSourceCaptureSchema = z
  .object({
    ...statusFields,
    active: z
      .boolean()
      .describe(
        "A run is reading the capture right now, or a session that is not Sluice's is attached (a worker's idle kept session is not counted).",
      ),
    orphan: z.boolean().describe('No deployed pipeline step owns the capture; it may be dropped.'),
    owner: captureOwnerSchema.nullable().describe('The deployed step that owns it; null for an orphan.'),
  })
  .describe('A Sluice capture (name starting with sluice_) found on the data source.');

export const captureSorts = ['capture_name'] as const;

export const listPipelineCapturesQuery = listQuerySchema(captureSorts)
  .extend({ environment_slug: slugSchema.optional().describe('Only captures of this environment.') })
  .strict();
export const pipelineCaptureListSchema = listResponseSchema('captures', pipelineCaptureSchema).describe(
  'Captures of the pipeline deployments, one per cdc source step and environment.',
);

export const listDataSourceCapturesQuery = listQuerySchema(captureSorts);
export const dataSourceCaptureListSchema = listResponseSchema('captures', dataSourceCaptureSchema).describe(
  'The sluice_ captures on the data source, read from the source now.',
);

export const pipelineCapturesParams = z
  .object({ organization: orgSlugParam, project: slugSchema, pipeline: slugSchema })
  .strict();
export const dataSourceCaptureParams = z
  .object({ organization: orgSlugParam, data_source: slugSchema, capture: captureNameSchema })
  .strict();
