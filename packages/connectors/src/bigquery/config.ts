import { z } from 'zod';
import { serviceAccountJsonField, timeoutSecondsField } from '../fields';

export const int64 = z.int().min(1).max(Number.MAX_SAFE_INTEGER);

export const bigqueryConfigSchema = z
  .object({
    project_id: z.string().min(1).max(255).describe('Google Cloud project that runs the jobs.'),
    default_dataset: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('Dataset used when a statement names none.'),
    location: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('Processing location, for example `US` or `europe-west1`.'),
    maximum_bytes_billed: int64
      .optional()
      .describe('Caps the bytes a query may process (billing guard), not the response size.'),
    timeout_seconds: timeoutSecondsField(300, 5),
  })
  .strict()
  .describe('BigQuery connector configuration.');

export const bigqueryCredentialsSchema = z
  .object({ service_account_json: serviceAccountJsonField })
  .strict()
  .describe('BigQuery credentials. Write-only.');

export const bigqueryStatementSchema = z
  .discriminatedUnion('operation', [
    z
      .object({
        type: z.literal('bigquery').describe('Statement type: `bigquery`.'),
        operation: z.literal('query').describe('Run SQL.'),
        sql: z
          .string()
          .min(1)
          .max(1_000_000)
          .describe('SQL; `{{param}}` placeholders become named parameters.'),
        dataset: z.string().min(1).max(1024).optional().describe('Default dataset for unqualified tables.'),
        maximum_bytes_billed: int64.optional().describe('Per-operation cap, itself capped by the connector.'),
        timeout_seconds: z.int().min(1).max(300).optional().describe('Per-operation timeout, 1 to 300.'),
      })
      .strict(),
    z
      .object({
        type: z.literal('bigquery').describe('Statement type: `bigquery`.'),
        operation: z.literal('insert_rows').describe('Stream rows into a table.'),
        table: z.string().min(1).max(1024).describe('Target table.'),
        rows: z
          .union([z.string(), z.array(z.record(z.string(), z.unknown()))])
          .describe('Rows to insert; usually `{{input}}`.'),
        dataset: z.string().min(1).max(1024).optional().describe('Dataset of the table.'),
        insert_id_prefix: z
          .string()
          .max(255)
          .optional()
          .describe('Prefix of the per-row insert ids (supports `{{runtime.run_slug}}`).'),
        timeout_seconds: z.int().min(1).max(300).optional().describe('Per-operation timeout, 1 to 300.'),
      })
      .strict(),
  ])
  .describe('BigQuery statement.');
