import { z } from 'zod';
import { nullableTimestampSchema, orgSlugParam, slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema, pageMeta } from '../../http/pagination';
import { confirmationField, confirmationQuery } from '../environments/index';

// Run states (docs/runs.md#states): queued -> running -> succeeded | failed | canceled;
// queued|running -> canceling -> canceled.
export const runStates = ['queued', 'running', 'canceling', 'succeeded', 'failed', 'canceled'] as const;
export type RunState = (typeof runStates)[number];
export const terminalRunStates: readonly RunState[] = ['succeeded', 'failed', 'canceled'];
export const runTriggers = ['api', 'schedule', 'webhook', 'retry'] as const;
export const stepStates = ['pending', 'running', 'succeeded', 'failed', 'canceled', 'skipped'] as const;

export const INPUT_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

const errorSchema = z
  .object({
    code: z.string().describe('Stable machine-readable code, e.g. WORKER_LOST, RUN_TIMEOUT.'),
    message: z.string().describe('Human-readable, sanitized message.'),
  })
  .describe('Why the run or step failed.');

export const runStepSchema = z
  .object({
    step_slug: slugSchema.describe('Step of the spec.'),
    state: z.enum(stepStates).describe('State of the step in the current attempt.'),
    rows_in: z.number().int().describe('Rows the step consumed.'),
    rows_out: z.number().int().describe('Rows the step produced or wrote.'),
    bytes_in: z.number().int().describe('Bytes the step consumed.'),
    bytes_out: z.number().int().describe('Bytes the step produced or wrote.'),
    started_at: nullableTimestampSchema.describe('When the step started, or null.'),
    finished_at: nullableTimestampSchema.describe('When the step ended, or null.'),
    error: errorSchema.nullable().describe('Why the step failed, or null.'),
  })
  .describe('Progress of one step of a run.');

export const runSchema = z
  .object({
    slug: slugSchema.describe('Run slug (client-supplied at execute, or generated).'),
    pipeline_slug: slugSchema.describe('Pipeline that ran.'),
    environment_slug: slugSchema.describe('Environment it ran in.'),
    spec_hash: z.string().describe('Spec hash of the deployment the run executes.'),
    state: z.enum(runStates).describe('succeeded, failed and canceled are terminal.'),
    trigger: z.enum(runTriggers).describe('What started the run.'),
    trigger_slug: slugSchema
      .nullable()
      .describe('The pipeline trigger that started it (trigger schedule or webhook), else null.'),
    input_keys: z
      .array(z.string())
      .describe('Names of the input values given at execute; the values are never stored or shown.'),
    attempt: z
      .number()
      .int()
      .min(1)
      .describe(
        'The current attempt: 1, then one more each time the run is tried again from the last committed checkpoint (after a lost worker, or after a retryable connector error while attempts are left: docs/runs.md "Retries").',
      ),
    created_at: timestampSchema,
    started_at: nullableTimestampSchema.describe('When a worker first started the run, or null.'),
    finished_at: nullableTimestampSchema.describe('When the run reached a terminal state, or null.'),
    error: errorSchema.nullable().describe('Why the run failed, or null.'),
    contract_checks: z
      .array(z.record(z.string(), z.unknown()))
      .describe(
        'Quality metrics measured at contracted sinks: step_slug, contract_slug, revision_slug, passed, rows, metrics (docs/drift-and-contracts.md).',
      ),
    steps: z.array(runStepSchema).describe('Per-step progress, in plan order.'),
  })
  .describe('A pipeline run: one asynchronous execution of the deployed spec.');

export const executeBody = z
  .object({
    input: z
      .record(z.string().regex(INPUT_KEY, 'must match ^[A-Za-z_][A-Za-z0-9_]*$').max(100), z.unknown())
      .optional()
      .describe(
        'Non-secret per-run values, available as `{{runtime.input.KEY}}`. Values are never stored in run records, events or logs; the run exposes only their key names.',
      ),
    protected_environment_confirmation: confirmationField,
    run_slug: slugSchema
      .optional()
      .describe(
        'Optional run slug. Repeating it for the same pipeline and environment returns that run (200) instead of starting another.',
      ),
  })
  .strict()
  .nullish()
  .describe('Pipeline execution request.');

export const envParams = z
  .object({ organization: orgSlugParam, project: slugSchema, environment: slugSchema })
  .strict();
export const pipelineParams = envParams.extend({ pipeline: slugSchema }).strict();
export const runParams = envParams.extend({ run_slug: slugSchema }).strict();

export const runSorts = ['run_created_at'] as const;
export const listRunsQuery = listQuerySchema(runSorts)
  .extend({
    pipeline_slug: slugSchema.optional().describe('Only runs of this pipeline.'),
    state: z.enum(runStates).optional().describe('Only runs in this state.'),
    trigger: z.enum(runTriggers).optional().describe('Only runs started this way.'),
    trigger_slug: slugSchema.optional().describe('Only runs this pipeline trigger started.'),
  })
  .strict();
export type ListRunsQuery = z.infer<typeof listRunsQuery>;
export const runListSchema = listResponseSchema('runs', runSchema);

export const runLogSchema = z
  .object({
    seq: z.number().int().min(1).describe('Position of the line in its run: 1, 2, 3, … across attempts.'),
    step_slug: slugSchema.nullable().describe('Step that wrote the line, or null for the run itself.'),
    level: z.enum(['debug', 'info', 'warn', 'error']).describe('Severity.'),
    message: z.string().describe('The line, with every secret value masked.'),
    at: timestampSchema.describe('When the line was written.'),
  })
  .describe('One log line of a run.');

export const logSorts = ['log_seq'] as const;
// The default order of docs/api-conventions.md#lists-and-pagination (desc: newest first); followers
// ask for asc.
export const listLogsQuery = listQuerySchema(logSorts);
export const runLogListSchema = listResponseSchema('logs', runLogSchema);

export const checkpointSchema = z
  .object({
    step_slug: slugSchema.describe('Source step the cursor belongs to.'),
    cursor: z
      .string()
      .nullable()
      .describe('`{{runtime.incremental.lower_bound.cursor}}` of the next run, or null.'),
    run_slug: slugSchema.nullable().describe('Run that committed the cursor, or null.'),
    updated_at: timestampSchema.describe('When the cursor last advanced.'),
  })
  .describe('Incremental cursor of a source step; advanced only after every sink of a run committed.');

export const checkpointListSchema = z
  .object({
    checkpoints: z.array(checkpointSchema).describe('Cursors of the pipeline in this environment.'),
    ...pageMeta,
  })
  .describe('The checkpoints of a pipeline in an environment: one per source step, always on one page.');

export const resetCheckpointsQuery = confirmationQuery;
