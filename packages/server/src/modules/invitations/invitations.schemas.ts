import { z } from 'zod';
import {
  emailSchema,
  nullableTimestampSchema,
  orgSlugParam,
  slugSchema,
  timestampSchema,
} from '../../http/fields';
import { listQuerySchema, listResponseSchema } from '../../http/pagination';

export const invitationStatuses = [
  'pending',
  'accepted',
  'declined',
  'expired',
  'revoked',
  'auto_accepted',
] as const;
export type InvitationStatus = (typeof invitationStatuses)[number];

export const invitationStatusSchema = z
  .enum(invitationStatuses)
  .describe(
    '`pending` until the invitee accepts or declines, an admin revokes it, or it passes `expires_at` (`expired`); `auto_accepted` when the invitee already belonged to the organization.',
  );

export const invitationSchema = z
  .object({
    slug: slugSchema.describe('Invitation slug, unique across the service.'),
    email: emailSchema.describe('Address invited; only a user with this verified address can respond.'),
    role: z.string().describe('Role slug the invitee gets on acceptance.'),
    status: invitationStatusSchema,
    invited_by_user_slug: slugSchema.nullable().describe('User who invited, or null (an API key did).'),
    expires_at: timestampSchema.describe('After this instant the invitation can no longer be accepted.'),
    responded_at: nullableTimestampSchema.describe('When it was accepted, declined or auto-accepted.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('An invitation of an email address to join the organization with a role.');

export const createInvitationBody = z
  .object({
    email: emailSchema.describe('Address to invite; the invitation is mailed there.'),
    role: slugSchema.describe('Role granted on acceptance; never stronger than the caller.'),
  })
  .strict();

export const invitationParams = z
  .object({ organization: orgSlugParam, invitation_slug: slugSchema })
  .strict();
export const inviteeParams = z.object({ invitation_slug: slugSchema }).strict();

export const invitationSorts = [
  'invitation_created_at',
  'invitation_updated_at',
  'invitation_email',
  'invitation_expires_at',
] as const;
export const listInvitationsQuery = listQuerySchema(invitationSorts).extend({
  status: invitationStatusSchema.optional().describe('Only invitations in this lifecycle status.'),
});
export const invitationListSchema = listResponseSchema('invitations', invitationSchema);
