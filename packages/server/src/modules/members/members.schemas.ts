import { z } from 'zod';
import { emailSchema, orgSlugParam, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

export const memberSchema = z
  .object({
    user_slug: slugSchema.describe('Slug of the member user.'),
    email: emailSchema,
    name: storedNameSchema.describe('Display name of the member user.'),
    role: z.string().describe('Role slug (built-in or custom) the member acts with in this organization.'),
    created_at: timestampSchema.describe('When the user joined the organization.'),
    updated_at: timestampSchema.describe('Last change of the membership (its role).'),
  })
  .describe('A user who belongs to the organization, with their role.');

export const memberParams = z.object({ organization: orgSlugParam, user_slug: slugSchema }).strict();

export const updateMemberBody = z
  .object({
    role: slugSchema.describe(
      'New role (built-in or custom). Never stronger than the caller; only an owner grants or removes owner.',
    ),
  })
  .strict();

export const memberSorts = ['member_created_at', 'member_updated_at', 'member_email'] as const;
export const listMembersQuery = listQuerySchema(memberSorts);
export const memberListSchema = listResponseSchema('members', memberSchema);
