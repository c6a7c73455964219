import { z } from 'zod';
import {
  nameSchema,
  nullableTimestampSchema,
  slugSchema,
  storedNameSchema,
  timestampSchema,
} from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

export const planSchema = z
  .object({
    name: z
      .string()
      .describe('Plan name: `trial` for a new organization, otherwise a paid plan such as `team`.'),
    status: z
      .enum(['trialing', 'active', 'expired'])
      .describe('`trialing` until `trial_ends_at`, then `expired`; `active` on a paid plan.'),
    trial_ends_at: nullableTimestampSchema.describe('End of the trial, or null on a paid plan.'),
  })
  .describe('The plan or trial the organization is on.');

export const organizationSchema = z
  .object({
    slug: z.string().describe('Organization slug, unique across the service.'),
    name: storedNameSchema,
    plan: planSchema,
    event_log_retention_days: z
      .number()
      .int()
      .describe('Days event records are kept online (1 to 30, default 30).'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('An organization (workspace): the tenant that owns every other resource.');

export const createOrganizationBody = z
  .object({
    name: nameSchema,
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
  })
  .strict();

export const updateOrganizationBody = z
  .object({
    name: nameSchema.optional(),
    event_log_retention_days: z
      .number()
      .int()
      .min(1)
      .max(30)
      .optional()
      .describe('Days event records are kept online, 1 to 30.'),
  })
  .strict();

export const organizationSorts = [
  'organization_created_at',
  'organization_updated_at',
  'organization_name',
] as const;
export const listOrganizationsQuery = listQuerySchema(organizationSorts);
export const organizationListSchema = listResponseSchema('organizations', organizationSchema);
