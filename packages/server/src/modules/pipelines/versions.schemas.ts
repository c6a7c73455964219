import { pipelineSpecSchema } from '@sluice/engine';
import { z } from 'zod';
import { orgSlugParam, slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { specHashSchema } from './pipelines.schemas';

export const versionSchema = z
  .object({
    spec_hash: specHashSchema,
    spec: z
      .record(z.string(), z.unknown())
      .describe('The spec as stored: parsed, with every default applied (what the hash covers).'),
    created_at: timestampSchema,
  })
  .describe('An immutable pipeline version, addressed by its spec_hash or a unique prefix of 7+ characters.');

export const pushVersionBody = z
  .object({
    spec: pipelineSpecSchema.describe('The pipeline spec (docs/pipeline-spec.md).'),
  })
  .strict();

/**
 * The `spec_hash` path parameter: a full hash or a unique prefix, 7+ characters
 * (docs/pipeline-spec.md#versions).
 */
export const specHashParam = z
  .string()
  .min(1)
  .max(64)
  .describe('Full spec hash or a unique prefix of at least 7 hexadecimal characters.');

export const versionParams = z
  .object({ organization: orgSlugParam, project: slugSchema, pipeline: slugSchema, spec_hash: specHashParam })
  .strict();

export const versionSorts = ['version_created_at'] as const;
export const listVersionsQuery = listQuerySchema(versionSorts);
export const versionListSchema = listResponseSchema('versions', versionSchema);
