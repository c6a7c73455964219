import { z } from 'zod';
import { nameSchema, orgSlugParam, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

const descriptionSchema = z
  .string()
  .max(2000)
  .nullable()
  .describe('Free text up to 2000 characters, or null.');

/** A full spec hash: SHA-256 of the canonical JSON of the spec, lowercase hex. */
export const specHashSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .describe('SHA-256 of the canonical (RFC 8785) JSON of the spec, lowercase hex.');

export const pipelineSchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    description: descriptionSchema,
    project_slug: slugSchema.describe('Project the pipeline belongs to.'),
    latest_spec_hash: specHashSchema
      .nullable()
      .describe('spec_hash of the most recently pushed version, or null before the first push.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('A pipeline: a named series of immutable spec versions, deployed per environment.');

export const createPipelineBody = z
  .object({
    name: nameSchema,
    description: descriptionSchema.optional(),
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
  })
  .strict();

export const updatePipelineBody = z
  .object({
    name: nameSchema.optional(),
    description: descriptionSchema.optional(),
  })
  .strict();

export const pipelinesParams = z.object({ organization: orgSlugParam, project: slugSchema }).strict();
export const pipelineParams = z
  .object({ organization: orgSlugParam, project: slugSchema, pipeline: slugSchema })
  .strict();

export const pipelineSorts = ['pipeline_created_at', 'pipeline_updated_at', 'pipeline_name'] as const;
export const listPipelinesQuery = listQuerySchema(pipelineSorts);
export const pipelineListSchema = listResponseSchema('pipelines', pipelineSchema);
