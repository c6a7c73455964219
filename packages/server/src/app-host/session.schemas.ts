import { z } from 'zod';
import { emailSchema, timestampSchema } from '../http/fields';
import { userSchema } from '../modules/identity/index';

export const signInBody = z
  .object({
    email: emailSchema,
    // No length policy here: sign-in must not tell which passwords could never be right.
    password: z.string().min(1).max(200).describe('The account password.'),
  })
  .strict()
  .describe('Sign-in request.');

export const sessionSchema = z
  .object({
    user: userSchema,
    expires_at: timestampSchema.describe('When the session ends; sign in again after it.'),
    csrf_token: z
      .string()
      .describe('Send as the x-csrf-token header on every request that changes something.'),
  })
  .describe('The browser session: who is signed in, until when.');

export type SignInInput = z.infer<typeof signInBody>;
