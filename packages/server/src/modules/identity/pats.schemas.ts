import { z } from 'zod';
import {
  nameSchema,
  nullableTimestampSchema,
  slugSchema,
  storedNameSchema,
  timestampSchema,
} from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

export const patSchema = z
  .object({
    slug: slugSchema,
    name: storedNameSchema,
    token_prefix: z.string().describe('First 12 characters of the token; identifies it without exposing it.'),
    expires_at: nullableTimestampSchema.describe('When the token stops working, or null.'),
    last_used_at: nullableTimestampSchema.describe('Last authenticated use (updated at most once a minute).'),
    revoked_at: nullableTimestampSchema.describe('When the token was revoked, or null.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('Personal access token: acts as its owner with the owner’s memberships and permissions.');

export const patWithTokenSchema = patSchema
  .extend({ token: z.string().describe('The raw token. Returned only in this response; store it now.') })
  .describe('Personal access token with its raw token (create response only).');

export const createPatBody = z
  .object({
    name: nameSchema,
    expires_at: z
      .string()
      .datetime({ offset: true })
      .nullable()
      .optional()
      .describe('Expiry (ISO 8601, in the future), or null for a token that does not expire.'),
    slug: slugSchema.optional().describe('Optional client-chosen slug; generated from the name when absent.'),
  })
  .strict()
  .describe('Personal access token creation request.');

export const updatePatBody = z
  .object({ name: nameSchema.optional() })
  .strict()
  .describe('Personal access token changes.');

export const patParams = z.object({ pat_slug: slugSchema }).strict();

export const patSorts = [
  'personal_access_token_created_at',
  'personal_access_token_updated_at',
  'personal_access_token_name',
] as const;
export const listPatsQuery = listQuerySchema(patSorts);
export const patListSchema = listResponseSchema('personal_access_tokens', patSchema);

export type CreatePatInput = z.infer<typeof createPatBody>;
