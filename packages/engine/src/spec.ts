import { z } from 'zod';

// The pipeline specification (docs/pipeline-spec.md#the-spec): steps, edges and declared inputs. A
// version is this document, immutable, addressed by the SHA-256 of its canonical JSON.

const slug = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must match ^[a-z0-9]+(?:-[a-z0-9]+)*$');
const inputKey = z
  .string()
  .max(100)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must match ^[A-Za-z_][A-Za-z0-9_]*$');

export const operationTypes = [
  'http',
  'sql',
  'mongodb',
  'ftp',
  'git',
  's3',
  'workspace_file',
  'object_rows',
  'cdc',
] as const;
export type OperationType = (typeof operationTypes)[number];

const stringMap = z.record(z.string(), z.string());

export const httpOperation = z
  .object({
    operation_type: z.literal('http'),
    method: z.enum(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD']).default('GET'),
    path: z
      .string()
      .min(1)
      .max(2000)
      .describe('Path relative to the data source base_url; templates allowed.'),
    query_params: stringMap.optional(),
    headers: stringMap.optional().describe('Non-secret headers; credentials belong to the data source.'),
    body: z.unknown().optional().describe('JSON value, or "{{input}}" to forward the upstream payload.'),
    batch_size: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .describe('Sinks with body "{{input}}": send the records in requests of at most this many.'),
  })
  .strict();

export const sqlWrite = z
  .object({
    table: z.string().min(1).max(200).describe('Target table, optionally schema-qualified.'),
    mode: z
      .enum(['insert', 'upsert', 'replace', 'apply'])
      .default('insert')
      .describe(
        'insert appends; upsert inserts or updates by key; replace empties the table and loads the payload; apply applies change rows (_op insert, update, delete or truncate, as a CDC source hands them on) by key (PostgreSQL and MySQL sinks).',
      ),
    key: z
      .array(z.string().min(1).max(200))
      .min(1)
      .optional()
      .describe('Key columns; required for upsert and apply.'),
    create_table: z
      .boolean()
      .default(false)
      .describe('Create the table from the payload columns when missing.'),
  })
  .strict();

export const sqlOperation = z
  .object({
    operation_type: z.literal('sql'),
    sql: z.string().min(1).max(100_000).optional().describe('Query of a source or transform step.'),
    cursor_column: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe("Source steps: the result column whose greatest value becomes the step's next cursor."),
    write: sqlWrite.optional().describe('Write target of a sink step.'),
  })
  .strict();

/**
 * Change data capture (docs/cdc.md): a source reading the database's own change log for the
 * named tables, in micro-batches; each run reads from the committed position up to the
 * server's position when it started, bounded by max_changes and max_seconds.
 */
export const cdcOperation = z
  .object({
    operation_type: z.literal('cdc'),
    tables: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(100)
      .describe('Schema-qualified tables to capture: schema.table (MySQL: database.table).'),
    snapshot: z
      .enum(['initial', 'never'])
      .default('initial')
      .describe(
        "initial: the first runs copy the tables' rows, then follow the changes; never: changes only.",
      ),
    max_changes: z
      .number()
      .int()
      .min(1)
      .max(10_000_000)
      .default(100_000)
      .describe(
        'At most this many changes (or snapshot rows) in one run; a backlog drains over several runs.',
      ),
    max_seconds: z
      .number()
      .int()
      .min(1)
      .max(3600)
      .default(60)
      .describe('A run stops reading after this many seconds, at a transaction boundary.'),
  })
  .strict();
export type CdcOperation = z.infer<typeof cdcOperation>;

/** Kinds whose statements are validated by their connector once that connector exists. */
const connectorOperation = (type: Exclude<OperationType, 'http' | 'sql' | 'cdc'>) =>
  z.object({ operation_type: z.literal(type) }).catchall(z.unknown());

export const operationSchema = z.discriminatedUnion('operation_type', [
  httpOperation,
  sqlOperation,
  connectorOperation('mongodb'),
  connectorOperation('ftp'),
  connectorOperation('git'),
  connectorOperation('s3'),
  connectorOperation('workspace_file'),
  connectorOperation('object_rows'),
  cdcOperation,
]);
export type Operation = z.infer<typeof operationSchema>;

export const responseSchema = z
  .object({
    records_path: z
      .string()
      .max(500)
      .optional()
      .describe('Dotted path to the record array in a JSON response.'),
    cursor_path: z
      .string()
      .max(500)
      .optional()
      .describe('Dotted path to the next cursor in a JSON response.'),
    format: z.enum(['auto', 'json', 'csv', 'file']).default('auto'),
  })
  .strict();

export const stepSchema = z
  .object({
    slug,
    kind: z.enum(['source', 'transform', 'sink']),
    data_source_ref: slug
      .optional()
      .describe('Logical data source; bound per environment. Sources and sinks only.'),
    operation: operationSchema,
    response: responseSchema.optional(),
    description: z.string().max(2000).optional(),
  })
  .strict();
export type Step = z.infer<typeof stepSchema>;

export const pipelineSpecSchema = z
  .object({
    steps: z.array(stepSchema).min(1).max(200),
    edges: z
      .array(z.object({ from: slug, to: slug }).strict())
      .max(1000)
      .default([]),
    inputs: z
      .record(
        inputKey,
        z
          .object({ required: z.boolean().default(false), description: z.string().max(2000).optional() })
          .strict(),
      )
      .default({}),
  })
  .strict();
export type PipelineSpec = z.infer<typeof pipelineSpecSchema>;
