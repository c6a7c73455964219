import { z } from 'zod';
import { orgSlugParam, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

export const refSchema = z
  .object({
    pipeline_slug: slugSchema,
    slug: slugSchema.describe('The `data_source_ref` of the steps that use it.'),
    name: storedNameSchema,
    data_source_type: z
      .string()
      .nullable()
      .describe('Data source type the ref needs, or null when several connector families fit (sql, git).'),
    required_capabilities: z
      .array(z.enum(['pipeline_source', 'pipeline_sink']))
      .describe('What the newest version does through the ref: read (source steps), write (sink steps).'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe(
    'Data source ref: a pipeline-scoped logical data source, derived from the steps of the newest version and bound to a concrete data source per environment.',
  );

export const refsParams = z
  .object({ organization: orgSlugParam, project: slugSchema, pipeline: slugSchema })
  .strict();
export const refParams = refsParams.extend({ data_source_ref_slug: slugSchema }).strict();

export const refSorts = [
  'data_source_ref_created_at',
  'data_source_ref_updated_at',
  'data_source_ref_name',
] as const;
export const listRefsQuery = listQuerySchema(refSorts);
export const refListSchema = listResponseSchema('data_source_refs', refSchema);
