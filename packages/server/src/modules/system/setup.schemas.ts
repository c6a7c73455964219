import { z } from 'zod';
import { emailSchema, nameSchema, slugSchema } from '../../http/fields';
import { passwordSchema } from '../identity/index';

export const setupBody = z
  .object({
    setup_code: z
      .string()
      .min(1)
      .max(100)
      .describe(
        'The one-time code `sluice serve` printed and wrote to `<data directory>/setup-code` (mode 0600) while the store had no organization.',
      ),
    organization_slug: slugSchema.describe('Slug of the first organization.'),
    email: emailSchema.describe("The first user's email; the user becomes the organization's owner."),
    name: nameSchema.optional().describe("The first user's display name (default: the email's local part)."),
    password: passwordSchema.optional().describe('Optional password for signing in to the app.'),
  })
  .strict()
  .describe('First-run setup request.');

export const setupResult = z
  .object({
    organization_slug: slugSchema.describe('The organization created.'),
    user_slug: slugSchema.describe('The owner user created.'),
    api_key: z.string().describe('An owner API key of the organization; shown once.'),
    personal_access_token: z.string().describe('A personal access token of the owner; shown once.'),
  })
  .describe('The first organization and its tokens, returned once.');
