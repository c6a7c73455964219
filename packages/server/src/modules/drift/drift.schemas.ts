import { z } from 'zod';
import { orgSlugParam, slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

const severity = z.enum(['safe', 'warning', 'breaking']);

export const changeSchema = z
  .object({
    kind: z
      .string()
      .describe(
        'column_added, column_removed, type_changed, nullability_changed, key_changed, table_added, table_removed, operation_added, operation_removed or parameter_changed.',
      ),
    path: z
      .string()
      .describe('`schema.table.column`, `collection.field`, `file.field`, `GET /orders#200.data[].id`.'),
    before: z.string().nullable().describe('Normalized type (or state) before; null when added.'),
    after: z.string().nullable().describe('Normalized type (or state) after; null when removed.'),
    severity: severity.describe('Severity of this change (docs/drift-and-contracts.md has the table).'),
    reason_code: z
      .string()
      .describe('Stable reason code, e.g. column_removed_referenced, star_widened, type_widened.'),
  })
  .describe('One normalized schema change.');

export const impactSchema = z
  .object({
    kind: z
      .enum(['pipeline', 'step', 'edge', 'sink', 'run', 'unknown_consumer'])
      .describe('What is affected.'),
    severity: severity.describe('Severity of this impact.'),
    message: z.string().describe('What happens, naming the column and the step.'),
    edge_slug: z.string().optional().describe('`from->to` of the affected edge.'),
    pipeline_slug: slugSchema.optional().describe('Affected pipeline.'),
    step_slug: slugSchema.optional().describe('Affected step.'),
  })
  .describe('A consequence of the changes for a bound pipeline.');

export const previewSchema = z
  .object({
    severity: severity.describe('The highest severity of any change or impact.'),
    summary: z.string().describe('One line: counts of changes by severity and the steps that break.'),
    changes: z.array(changeSchema).describe('Normalized changes.'),
    impacts: z.array(impactSchema).describe('Impacts on bound pipelines.'),
  })
  .describe('A drift impact report computed and not stored.');

export const reportSchema = previewSchema
  .extend({
    slug: slugSchema,
    report_type: z.enum(['contract_impact', 'source_schema']).describe('What produced the report.'),
    status: z
      .enum(['open', 'superseded'])
      .describe('`superseded` once a newer report covers the same subject.'),
    project_slug: slugSchema
      .nullable()
      .describe('Project whose pipelines the impacts cover (null: none binds the data source).'),
    pipeline_slug: slugSchema.optional().describe('contract_impact reports: the pipeline.'),
    data_source_slug: slugSchema.optional().describe('source_schema reports: the data source.'),
    created_at: timestampSchema,
    superseded_at: timestampSchema.nullable().describe('When a newer report superseded this one, or null.'),
  })
  .describe('A drift impact report (docs/drift-and-contracts.md).');

export const reportSorts = ['drift_report_created_at'] as const;
export const listReportsQuery = listQuerySchema(reportSorts);
export const reportListSchema = listResponseSchema('reports', reportSchema);

export const projectReportParams = z.object({ organization: orgSlugParam, project: slugSchema }).strict();
export const reportParams = z
  .object({ organization: orgSlugParam, project: slugSchema, report_slug: slugSchema })
  .strict();

const field = z
  .object({
    name: z.string().min(1).max(500).describe('Column or field name.'),
    type: z.string().max(200).describe('Type as the source spells it.'),
    nullable: z.boolean().optional().describe('May hold null.'),
    primary_key: z.boolean().optional().describe('Part of the primary key.'),
  })
  .passthrough();
const fields = z.array(field).max(10_000);

/** A candidate schema in the shapes schema import stores (service-api: schema introspection results). */
const candidateSchema = z
  .object({
    schema_type: z.enum(['relational', 'document', 'file', 'openapi', 'empty']).describe('Kind of schema.'),
    tables: z
      .array(
        z.object({ schema: z.string().optional(), name: z.string().min(1), columns: fields }).passthrough(),
      )
      .max(10_000)
      .optional()
      .describe('relational: tables with their columns.'),
    collections: z
      .array(z.object({ name: z.string().min(1), fields }).passthrough())
      .max(10_000)
      .optional()
      .describe('document: collections with their fields.'),
    files: z
      .array(z.object({ name: z.string().min(1), fields }).passthrough())
      .max(10_000)
      .optional()
      .describe('file: files with their fields.'),
    operations: z
      .array(
        z
          .object({
            method: z.string().min(1).max(10),
            path: z.string().min(1).max(2000),
            parameters: z
              .array(z.object({ name: z.string(), in: z.string(), required: z.boolean() }).passthrough())
              .optional(),
            response_fields: fields.optional(),
          })
          .passthrough(),
      )
      .max(10_000)
      .optional()
      .describe('openapi: imported operations.'),
  })
  .passthrough()
  .describe('Candidate schema in the imported shape.');

export const previewBody = z
  .object({
    environment_slug: slugSchema.describe('Environment whose bindings and deployment the preview uses.'),
    spec_hash: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('A pushed version to check instead of the deployed one.'),
    spec: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('A draft spec to check instead of the deployed one.'),
    data_source_slug: slugSchema
      .optional()
      .describe('The changed data source; needed when the pipeline binds several in the environment.'),
    schema: candidateSchema
      .optional()
      .describe(
        'Candidate schema in the imported shape (schema_type relational, document, file or openapi); default: the stored schema.',
      ),
  })
  .strict();
