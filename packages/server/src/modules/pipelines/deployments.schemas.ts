import { z } from 'zod';
import { slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { confirmationField, confirmationQuery } from '../environments/index';
import { peParams } from './bindings.schemas';
import { specHashSchema } from './pipelines.schemas';
import { specHashParam } from './versions.schemas';

export const deploymentSchema = z
  .object({
    slug: slugSchema,
    pipeline_slug: slugSchema,
    environment_slug: slugSchema,
    spec_hash: specHashSchema,
    validation_slug: slugSchema.nullable().describe('The passing validation the deploy relied on.'),
    active: z.boolean().describe('Whether runs in this environment use this deployment (one per pipeline).'),
    deployed_by: z
      .object({
        actor_type: z.enum(['unknown', 'user', 'api_key', 'system', 'external']),
        actor_slug: slugSchema.nullable(),
      })
      .describe('Who deployed.'),
    created_at: timestampSchema,
  })
  .describe('A deployment: the version of a pipeline that runs in an environment from now on.');

export const deployParams = peParams.extend({ pipeline: slugSchema }).strict();

export const deployBody = z
  .object({
    spec_hash: specHashParam.describe('Version to deploy: full hash or unique prefix (7+ characters).'),
    protected_environment_confirmation: confirmationField,
  })
  .strict();

export const deployQuery = confirmationQuery;

export const deploymentSorts = ['deployment_created_at'] as const;
export const listDeploymentsQuery = listQuerySchema(deploymentSorts).extend({
  pipeline_slug: slugSchema.optional().describe('Only the deployments of this pipeline.'),
});
export const deploymentListSchema = listResponseSchema('deployments', deploymentSchema);
