import { z } from 'zod';
import { orgSlugParam, slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { confirmationField, runtimeKeySchema } from '../environments/index';

export const variableKeySchema = runtimeKeySchema.describe(
  'Variable key, up to 100 characters matching ^[A-Za-z_][A-Za-z0-9_]*$; referenced as {{runtime.env.KEY}}.',
);

const valueSchema = z
  .string()
  .max(65536)
  .describe('The value, up to 65536 characters. Not secret: use an environment secret for credentials.');
const descriptionSchema = z
  .string()
  .max(2000)
  .nullable()
  .describe('Free text up to 2000 characters, or null.');

export const runtimeVariableSchema = z
  .object({
    environment_slug: slugSchema.describe('Environment the variable belongs to.'),
    key: variableKeySchema,
    value: valueSchema,
    description: descriptionSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('A non-secret runtime variable of an environment.');

export const putVariableBody = z
  .object({
    value: valueSchema,
    description: descriptionSchema
      .optional()
      .describe('Free text up to 2000 characters, or null; kept unchanged when omitted on a replace.'),
    protected_environment_confirmation: confirmationField,
  })
  .strict();

export const variableParams = z
  .object({ organization: orgSlugParam, environment: slugSchema, runtime_variable_key: variableKeySchema })
  .strict();

export const variableSorts = [
  'runtime_variable_created_at',
  'runtime_variable_updated_at',
  'runtime_variable_key',
] as const;
export const listVariablesQuery = listQuerySchema(variableSorts);
export const variableListSchema = listResponseSchema('runtime_variables', runtimeVariableSchema);
