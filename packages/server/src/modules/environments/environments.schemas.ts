import { z } from 'zod';
import {
  nameSchema,
  nullableTimestampSchema,
  orgSlugParam,
  slugSchema,
  storedNameSchema,
  timestampSchema,
} from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import { confirmationField } from './protected';

export const environmentColors = ['blue', 'amber', 'red', 'green', 'purple', 'gray'] as const;

const descriptionSchema = z
  .string()
  .max(2000)
  .nullable()
  .describe('Free text up to 2000 characters, or null.');
const deleteReasonSchema = z
  .string()
  .max(2000)
  .describe('Why the environment was deleted, up to 2000 characters.');
const colorSchema = z.enum(environmentColors).describe('Display color.');
const protectedSchema = z
  .boolean()
  .describe(
    'Protected environments need `protected_environment_confirmation` (the exact slug) on every runtime-changing operation.',
  );

const runTimeoutSchema = z
  .number()
  .int()
  .min(1)
  .max(7 * 86400)
  .nullable()
  .describe(
    'Time limit of a pipeline run in this environment, in seconds (1 to 604800); null uses the default (SLUICE_RUN_TIMEOUT_SECONDS, 1 hour).',
  );

export const environmentSchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    description: descriptionSchema,
    color: colorSchema,
    protected: protectedSchema,
    run_timeout_seconds: runTimeoutSchema,
    deleted_at: nullableTimestampSchema.describe('When the environment was soft-deleted, or null.'),
    delete_reason: deleteReasonSchema.nullable(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('An organization-level environment (for example staging or production).');

export const createEnvironmentBody = z
  .object({
    name: nameSchema,
    description: descriptionSchema.optional(),
    color: colorSchema.default('gray'),
    protected: protectedSchema.default(false),
    run_timeout_seconds: runTimeoutSchema.optional(),
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
  })
  .strict();

export const updateEnvironmentBody = z
  .object({
    name: nameSchema.optional(),
    description: descriptionSchema.optional(),
    color: colorSchema.optional(),
    protected: protectedSchema.optional(),
    run_timeout_seconds: runTimeoutSchema.optional(),
    protected_environment_confirmation: confirmationField,
  })
  .strict();

export const deleteEnvironmentBody = z
  .object({
    delete_reason: deleteReasonSchema.nullable().optional(),
    protected_environment_confirmation: confirmationField,
  })
  .strict()
  .nullish()
  .describe('Optional; the same fields are accepted as query parameters.');

export const deleteEnvironmentQuery = z
  .object({
    delete_reason: deleteReasonSchema.optional(),
    protected_environment_confirmation: slugSchema
      .optional()
      .describe('Exact slug of the environment, required when it is protected.'),
  })
  .strict();

export const purgeEnvironmentBody = z
  .object({ protected_environment_confirmation: confirmationField })
  .strict()
  .nullish()
  .describe('Optional; the confirmation is accepted as a query parameter too.');

export const environmentParams = z.object({ organization: orgSlugParam, environment: slugSchema }).strict();

export const environmentSorts = [
  'environment_created_at',
  'environment_updated_at',
  'environment_name',
] as const;
export const listEnvironmentsQuery = listQuerySchema(environmentSorts).extend({
  include_deleted: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe('Include soft-deleted environments (default false).'),
});
export const environmentListSchema = listResponseSchema('environments', environmentSchema);

/** Key of a secret or runtime variable: referenced as `{{runtime.secrets.KEY}}` / `{{runtime.env.KEY}}`. */
export const runtimeKeySchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must match ^[A-Za-z_][A-Za-z0-9_]*$');
