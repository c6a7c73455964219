import { z } from 'zod';
import { orgSlugParam, slugSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { confirmationField, environmentSchema, environmentSorts } from '../environments/index';

export const projectEnvironmentSchema = environmentSchema
  .extend({
    is_default: z.boolean().describe("Whether this is the project's default environment (at most one is)."),
  })
  .describe('An environment enabled for a project.');

export const enableEnvironmentBody = z
  .object({
    is_default: z
      .boolean()
      .default(false)
      .describe("Make this the project's default environment (clears the previous default)."),
    protected_environment_confirmation: confirmationField,
  })
  .strict()
  .nullish()
  .describe('Enable-environment-for-project request; optional (all fields have defaults).');

export const projectEnvironmentParams = z
  .object({ organization: orgSlugParam, project: slugSchema, environment: slugSchema })
  .strict();

export const listProjectEnvironmentsQuery = listQuerySchema(environmentSorts);
export const projectEnvironmentListSchema = listResponseSchema('environments', projectEnvironmentSchema);
