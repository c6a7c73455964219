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

export const apiKeySchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    token_prefix: z
      .string()
      .describe('First 12 characters of the token; identifies the key without exposing it.'),
    role: z.string().describe('Member role the key acts with (built-in or custom role slug).'),
    can_manage_api_keys: z
      .boolean()
      .describe('Whether the key may manage API keys when its role grants api_keys.manage.'),
    description: z.string().nullable().optional().describe('Free text.'),
    created_by_user_slug: slugSchema
      .nullable()
      .optional()
      .describe('User who created the key, if a user did.'),
    expires_at: nullableTimestampSchema.describe('When the key stops working, or null.'),
    revoked_at: nullableTimestampSchema.describe('When the key was revoked, or null.'),
    last_used_at: nullableTimestampSchema.describe('Last authenticated use (updated at most once a minute).'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('Organization API key: a machine identity for automation.');

export const apiKeyWithTokenSchema = apiKeySchema
  .extend({ token: z.string().describe('The raw key. Returned only in this response; store it now.') })
  .describe('API key with its raw token (create and rotate responses only).');

export const createApiKeyBody = z
  .object({
    name: nameSchema,
    role: slugSchema.describe('Role the key acts with; never more permissions than the caller has.'),
    can_manage_api_keys: z
      .boolean()
      .default(false)
      .describe('Let the key manage API keys (needs api_keys.manage in its role).'),
    description: z.string().max(2000).nullable().optional().describe('Free text, up to 2000 characters.'),
    expires_at: z
      .string()
      .datetime({ offset: true })
      .nullable()
      .optional()
      .describe('Expiry (ISO 8601, in the future), or null.'),
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
  })
  .strict();

export const updateApiKeyBody = z
  .object({
    name: nameSchema.optional(),
    description: z.string().max(2000).nullable().optional().describe('Free text, up to 2000 characters.'),
  })
  .strict();

export const apiKeyParams = z.object({ organization: orgSlugParam, api_key_slug: slugSchema }).strict();

export const apiKeySorts = ['api_key_created_at', 'api_key_updated_at', 'api_key_name'] as const;
export const listApiKeysQuery = listQuerySchema(apiKeySorts);
export const apiKeyListSchema = listResponseSchema('api_keys', apiKeySchema);
