import { z } from 'zod';
import { nameSchema, orgSlugParam, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

const columnName = z.string().min(1).max(200);
const bound = z.number().finite();

export const contractColumnSchema = z
  .object({
    name: columnName.describe('Column name as the sink writes it.'),
    type: z
      .string()
      .min(1)
      .max(100)
      .describe(
        'Column type, normalized before comparing as drift normalizes (varchar = text, int4 = integer); decimal without precision and scale accepts any.',
      ),
    nullable: z.boolean().default(true).describe('May hold null (ODCS: the inverse of required).'),
    unique: z.boolean().default(false).describe('Values are unique.'),
    primary_key: z.boolean().default(false).describe('Part of the primary key.'),
  })
  .strict();

export const qualityRuleSchema = z
  .object({
    metric: z
      .enum(['row_count', 'null_values', 'duplicate_values'])
      .describe('Measured as rows stream through the sink.'),
    column: columnName.optional().describe('null_values: the column measured.'),
    columns: z
      .array(columnName)
      .min(1)
      .max(20)
      .optional()
      .describe('duplicate_values: the columns whose combination must be unique (default: all).'),
    unit: z
      .enum(['rows', 'percent'])
      .optional()
      .describe('null_values and duplicate_values: count of rows (default) or percent of rows.'),
    must_be: bound.optional().describe('The metric must equal this.'),
    must_be_less_than: bound.optional().describe('The metric must be less than this.'),
    must_be_greater_than: bound.optional().describe('The metric must be greater than this.'),
  })
  .strict()
  .refine(
    (q) =>
      q.must_be !== undefined || q.must_be_less_than !== undefined || q.must_be_greater_than !== undefined,
    {
      message: 'a rule needs must_be, must_be_less_than or must_be_greater_than',
    },
  )
  .refine((q) => q.metric !== 'null_values' || q.column !== undefined, {
    message: 'null_values needs column',
  });

export const freshnessSchema = z
  .object({
    column: columnName.describe('Timestamp column whose newest value is measured.'),
    max_latency_seconds: z.number().int().min(1).max(31_536_000).describe('Maximum age of the newest value.'),
  })
  .strict();

export const revisionSchema = z
  .object({
    slug: slugSchema,
    based_on: slugSchema
      .nullable()
      .describe('The revision this one was checked against, or null for the first.'),
    compatibility: z.enum(['backward', 'none']).describe('`none` accepts a breaking change on purpose.'),
    columns: z.array(contractColumnSchema).describe('Promised columns.'),
    quality: z.array(qualityRuleSchema).describe('Quality rules checked on every run.'),
    freshness: freshnessSchema.nullable().describe('Freshness promise, or null.'),
    digest: z.string().describe('`sha256:` of the canonical JSON of columns, quality and freshness.'),
    created_at: timestampSchema,
  })
  .describe('An immutable contract revision.');

export const createRevisionBody = z
  .object({
    slug: slugSchema.optional().describe('Optional; `r<n>` when absent.'),
    based_on: slugSchema.optional().describe('Default: the latest revision.'),
    compatibility: z
      .enum(['backward', 'none'])
      .default('backward')
      .describe('`backward` (default) refuses breaking changes.'),
    columns: z.array(contractColumnSchema).min(1).max(1000).describe('Promised columns.'),
    quality: z.array(qualityRuleSchema).max(100).default([]).describe('Quality rules.'),
    freshness: freshnessSchema.nullable().default(null).describe('Freshness promise.'),
  })
  .strict();

export const contractSchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    description: z.string().nullable().describe('Free text, or null.'),
    target: z
      .object({ pipeline_slug: slugSchema, step_slug: slugSchema })
      .describe('The sink whose output the contract describes.'),
    latest_revision_slug: slugSchema.nullable().describe('Newest revision, or null before the first.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('A data contract on a pipeline sink.');

export const createContractBody = z
  .object({
    name: nameSchema,
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
    description: z.string().max(2000).nullable().optional().describe('Free text up to 2000 characters.'),
    target: z
      .object({
        pipeline_slug: slugSchema.describe('Pipeline.'),
        step_slug: slugSchema.describe('Sink step.'),
      })
      .strict()
      .describe('The sink whose output the contract describes.'),
  })
  .strict();

export const contractParams = z
  .object({ organization: orgSlugParam, project: slugSchema, contract_slug: slugSchema })
  .strict();
export const revisionParams = contractParams.extend({ revision_slug: slugSchema }).strict();
export const revisionQuery = z
  .object({
    format: z
      .enum(['sluice', 'odcs'])
      .default('sluice')
      .describe('`odcs`: the Open Data Contract Standard v3.1.0 form.'),
  })
  .strict();
export const odcsSchema = z
  .record(z.string(), z.unknown())
  .describe('An ODCS v3.1.0 data contract document (`apiVersion: v3.1.0`).');

export const listContractsQuery = listQuerySchema(['contract_created_at'] as const);
export const contractListSchema = listResponseSchema('contracts', contractSchema);
export const listRevisionsQuery = listQuerySchema(['contract_revision_created_at'] as const);
export const revisionListSchema = listResponseSchema('revisions', revisionSchema);

export type CreateRevisionInput = z.infer<typeof createRevisionBody>;
export type CreateContractInput = z.infer<typeof createContractBody>;
