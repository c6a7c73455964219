import { z } from 'zod';
import { orgSlugParam, slugSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { confirmationField, runtimeKeySchema } from '../environments/index';

export const secretKeySchema = runtimeKeySchema.describe(
  'Secret key, up to 100 characters matching ^[A-Za-z_][A-Za-z0-9_]*$; referenced as {{runtime.secrets.KEY}}.',
);

const descriptionSchema = z
  .string()
  .max(2000)
  .nullable()
  .describe('Free text up to 2000 characters, or null.');

// The sanitized read shape: a secret's value is write-only and has no field here.
export const environmentSecretSchema = z
  .object({
    environment_slug: slugSchema.describe('Environment the secret belongs to.'),
    key: secretKeySchema,
    description: descriptionSchema,
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('Environment secret metadata. Values are write-only and never returned.');

export const putSecretBody = z
  .object({
    value: z
      .string()
      .min(1)
      .max(65536)
      .describe('The secret value, 1 to 65536 characters; encrypted at rest and never returned.'),
    description: descriptionSchema
      .optional()
      .describe('Free text up to 2000 characters, or null; kept unchanged when omitted on a replace.'),
    protected_environment_confirmation: confirmationField,
  })
  .strict();

export const secretParams = z
  .object({ organization: orgSlugParam, environment: slugSchema, environment_secret_key: secretKeySchema })
  .strict();

export const secretSorts = [
  'environment_secret_created_at',
  'environment_secret_updated_at',
  'environment_secret_key',
] as const;
export const listSecretsQuery = listQuerySchema(secretSorts);
export const secretListSchema = listResponseSchema('environment_secrets', environmentSecretSchema);
