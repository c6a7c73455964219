import { z } from 'zod';
import { nameSchema, orgSlugParam, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';
import {
  entityTypeSchema,
  eventActionSchema,
  lifecycleStateSchema,
  notificationTypeSchema,
  severitySchema,
} from '../notifications/index';

export const policyScopes = ['unknown', 'organization', 'project', 'project_environment'] as const;

const filters = {
  notification_type: notificationTypeSchema.nullable().describe('Null or omitted matches any type.'),
  severity: severitySchema.nullable().describe('Null or omitted matches any severity (exact match).'),
  lifecycle_state: lifecycleStateSchema.nullable().describe('Null or omitted matches any lifecycle state.'),
  source_kind: entityTypeSchema.nullable().describe('Null or omitted matches any source entity type.'),
  source_action: eventActionSchema.nullable().describe('Null or omitted matches any source action.'),
  source_ref: slugSchema
    .nullable()
    .describe("Null or omitted matches any; else one of the notification's source_refs values."),
};

export const policySchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    scope: z
      .enum(policyScopes)
      .describe('organization matches everything; project and project_environment match exactly.'),
    project_slug: slugSchema.nullable().describe('Project the policy is scoped to (project scopes).'),
    environment_slug: slugSchema.nullable().describe('Environment the policy is scoped to.'),
    ...filters,
    destination_slugs: z.array(slugSchema).min(1).describe('Where matching notifications are sent.'),
    enabled: z.boolean().describe('Disabled policies send nothing.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('Selects notifications (scope and non-null filters, all must match) and sends them.');

const optionalFilters = Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, v.optional()])) as {
  [K in keyof typeof filters]: z.ZodOptional<(typeof filters)[K]>;
};

export const createPolicyBody = z
  .object({
    name: nameSchema,
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
    scope: z
      .enum(['organization', 'project', 'project_environment'])
      .describe(
        'organization: no project or environment; project: project_slug only; project_environment: both.',
      ),
    project_slug: slugSchema
      .nullable()
      .optional()
      .describe('Required for project and project_environment scopes.'),
    environment_slug: slugSchema
      .nullable()
      .optional()
      .describe('Required for project_environment scope only.'),
    ...optionalFilters,
    destination_slugs: z
      .array(slugSchema)
      .min(1)
      .max(20)
      .describe('Alert destinations of this organization, 1 to 20.'),
    enabled: z.boolean().default(true).describe('Whether the policy sends (default true).'),
  })
  .strict();

export const updatePolicyBody = z
  .object({
    name: nameSchema.optional(),
    scope: z.enum(['organization', 'project', 'project_environment']).optional().describe('New scope.'),
    project_slug: slugSchema.nullable().optional().describe('Project; null to clear.'),
    environment_slug: slugSchema.nullable().optional().describe('Environment; null to clear.'),
    ...optionalFilters,
    destination_slugs: z.array(slugSchema).min(1).max(20).optional().describe('Replaces the destinations.'),
    enabled: z.boolean().optional().describe('Whether the policy sends.'),
  })
  .strict();

export const policyParams = z.object({ organization: orgSlugParam, alert_policy_slug: slugSchema }).strict();

export const policySorts = ['alert_policy_created_at'] as const;
export const listPoliciesQuery = listQuerySchema(policySorts);
export const policyListSchema = listResponseSchema('alert_policies', policySchema);

export const sourceMetadataSchema = z
  .object({
    sources: z
      .array(
        z.object({
          source_kind: entityTypeSchema,
          source_actions: z.array(eventActionSchema).min(1).describe('Actions that raise notifications.'),
        }),
      )
      .describe('The entity types and actions notifications are raised from.'),
    source_refs: z
      .array(
        z.object({
          value: slugSchema.describe('A slug usable as a policy source_ref.'),
          label: z.string().min(1).max(255).describe('Its name, with what it is.'),
        }),
      )
      .describe("The organization's pipelines, data sources and destinations."),
  })
  .describe('What alert policy source filters can select in this organization.');
