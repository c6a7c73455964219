import { z } from 'zod';
import { nameSchema, orgSlugParam, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

const statementSchema = z
  .record(z.string(), z.unknown())
  .describe(
    'The statement in the shape of the data source type, checked against that connector: for postgres and mysql `{type: "sql", sql}` with `{{name}}` placeholders sent as bound parameters.',
  );

const descriptionSchema = z.string().max(2000).nullable().describe('Free text, up to 2000 characters.');

export const querySchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    description: descriptionSchema,
    data_source_slug: slugSchema.describe('Data source the statement runs against.'),
    statement: statementSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('A saved query: a statement bound to one data source, executed with parameters.');

export const createQueryBody = z
  .object({
    name: nameSchema,
    data_source_slug: slugSchema.describe('Data source the statement runs against.'),
    statement: statementSchema,
    description: descriptionSchema.optional(),
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
  })
  .strict();

export const updateQueryBody = z
  .object({
    name: nameSchema.optional(),
    data_source_slug: slugSchema
      .optional()
      .describe('Move the query to another data source (the statement is checked against its type).'),
    statement: statementSchema.optional(),
    description: descriptionSchema.optional(),
  })
  .strict();

export const queryParams = z.object({ organization: orgSlugParam, query_slug: slugSchema }).strict();
export const executionParams = z.object({ organization: orgSlugParam, execution_slug: slugSchema }).strict();

export const querySorts = ['query_created_at', 'query_updated_at', 'query_name'] as const;
export const listQueriesQuery = listQuerySchema(querySorts);
export const queryListSchema = listResponseSchema('queries', querySchema);

export const executeQueryBody = z
  .object({
    parameters: z
      .record(z.string().min(1).max(100), z.unknown())
      .refine((p) => Object.keys(p).length <= 100, 'at most 100 parameters')
      .describe(
        'Map of parameter name to value (any JSON value) for the `{{name}}` placeholders. Values are bound, never spliced into the statement, and never stored: the execution keeps only their names.',
      ),
  })
  .strict()
  .describe('Query execution request.');

const errorObject = z
  .object({
    code: z
      .string()
      .describe(
        'Why it failed: CONNECTION_FAILED, HOST_NOT_FOUND, TIMEOUT, AUTHENTICATION_FAILED, PERMISSION_DENIED, PRIVATE_HOST_BLOCKED, INVALID_STATEMENT, QUERY_FAILED, …',
      ),
    message: z.string().describe('Sanitized message: never a credential or a parameter value.'),
  })
  .nullable()
  .describe('The failure of a failed execution, null otherwise.');

export const executionSchema = z
  .object({
    slug: slugSchema,
    query_slug: slugSchema,
    status: z.enum(['succeeded', 'failed']).describe('Outcome of the execution.'),
    result_type: z
      .enum(['sql', 'mongodb', 'http', 'object_rows', 'ftp', 'git', 's3', 'workspace_file'])
      .describe('Shape of `result`; `sql` for postgres and mysql.'),
    parameter_keys: z.array(z.string()).describe('Names of the parameters passed (values are never stored).'),
    result: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        'The bounded result, null when the execution failed. For `sql`: {columns: [{name, type}], rows: [[…]] (one array per row, in column order), command, affected_rows}.',
      ),
    type: z
      .string()
      .describe('The statement type of the query (`sql`, `ftp`, `http`, …), as connector results name it.'),
    success: z.boolean().describe('True when the execution succeeded (status `succeeded`).'),
    payload: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        'The same value as `result`, under the name the connector docs give results (FTP: operation, format, rows, column_names, …).',
      ),
    row_count: z.number().int().nullable().describe('Rows in `result` (after truncation), null when failed.'),
    truncated: z.boolean().describe('True when rows were left out to stay within the row or size limit.'),
    error: errorObject,
    duration_ms: z
      .number()
      .int()
      .nullable()
      .describe('Time spent connecting and executing, in milliseconds.'),
    executed_at: timestampSchema,
  })
  .describe('One execution of a saved query, kept with its bounded result.');

export const executionSorts = ['query_execution_executed_at'] as const;
export const listExecutionsQuery = listQuerySchema(executionSorts);
export const executionListSchema = listResponseSchema('query_executions', executionSchema);
