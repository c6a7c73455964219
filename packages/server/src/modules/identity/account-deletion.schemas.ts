import { z } from 'zod';
import { slugSchema, timestampSchema } from '../../http/fields';

export const DELETION_CONFIRMATION = 'DELETE MY ACCOUNT';

export const deletionStates = ['pending', 'completed', 'failed', 'ownership_required'] as const;
export type DeletionState = (typeof deletionStates)[number];

export const deletionRequestBody = z
  .object({
    confirmation: z.literal(DELETION_CONFIRMATION).describe('Must be exactly "DELETE MY ACCOUNT".'),
  })
  .strict()
  .describe('Account deletion confirmation.');

export const deletionRequestSchema = z
  .object({
    slug: slugSchema.describe('Identifies the request (generated, `adr-…`).'),
    state: z
      .enum(deletionStates)
      .describe(
        '`completed`: the account is gone. `ownership_required`: hand over ownership first. `pending`: organizations where you are the only member must be removed first. `failed`: the deletion failed unexpectedly and nothing was deleted; confirm again to retry.',
      ),
    requested_at: timestampSchema.describe('When the request was first made.'),
    ownership_required: z
      .array(slugSchema)
      .describe('Organizations where you are the only owner while other members exist.'),
    organization_removal_required: z
      .array(slugSchema)
      .describe('Organizations where you are the only active member; remove them explicitly first.'),
    completed_at: timestampSchema.optional().describe('When the account was deleted (state completed).'),
  })
  .describe(
    'Account deletion request. The account is deleted at once when nothing blocks it; otherwise nothing is deleted, the lists say what to resolve, and the next confirmation re-evaluates the same request.',
  );
