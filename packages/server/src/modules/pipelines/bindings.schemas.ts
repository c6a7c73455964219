import { z } from 'zod';
import { orgSlugParam, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { confirmationField, confirmationQuery } from '../environments/index';

export const bindingSchema = z
  .object({
    pipeline_slug: slugSchema,
    data_source_ref_slug: slugSchema,
    data_source_ref_name: storedNameSchema,
    environment_slug: slugSchema,
    data_source_slug: slugSchema,
    data_source_name: storedNameSchema,
    data_source_type: z.string().describe('Type of the bound data source.'),
    data_source_active: z
      .boolean()
      .describe('Whether the bound data source is active (runs need it active).'),
    data_source_read_only: z.boolean().describe('A read-only data source cannot serve a sink step.'),
    bound_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe(
    'Data source binding: ties a pipeline data source ref to a concrete data source in one environment.',
  );

export const pe = '/organizations/:organization/projects/:project/environments/:environment';

export const peParams = z
  .object({ organization: orgSlugParam, project: slugSchema, environment: slugSchema })
  .strict();

export const bindingParams = peParams
  .extend({ pipeline: slugSchema, data_source_ref_slug: slugSchema })
  .strict();

export const putBindingBody = z
  .object({
    data_source_slug: slugSchema.describe('Data source of the organization to bind the ref to.'),
    protected_environment_confirmation: confirmationField,
  })
  .strict();

export const bindingQuery = confirmationQuery;

export const bindingSorts = ['data_source_binding_bound_at', 'data_source_binding_updated_at'] as const;
export const listBindingsQuery = listQuerySchema(bindingSorts).extend({
  pipeline_slug: slugSchema.optional().describe('Only the bindings of this pipeline.'),
});
export const bindingListSchema = listResponseSchema('data_source_bindings', bindingSchema);
