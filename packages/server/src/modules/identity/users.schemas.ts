import { z } from 'zod';
import { emailSchema, nameSchema, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';

export const passwordSchema = z
  .string()
  .min(12)
  .max(200)
  .describe('Password, 12 to 200 characters. Stored only as an Argon2id hash.');

export const userSchema = z
  .object({
    slug: slugSchema,
    email: emailSchema.describe('Email address (lowercase); signs in together with the password.'),
    name: storedNameSchema,
    email_verified: z.boolean().describe('Whether the address was confirmed with the mailed token.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('A user account.');

export const signUpBody = z
  .object({
    email: emailSchema.describe('Email address; stored lowercase, unique across accounts.'),
    password: passwordSchema,
    name: nameSchema,
    slug: slugSchema
      .optional()
      .describe('Optional client-chosen user slug; generated from the name otherwise.'),
  })
  .strict()
  .describe('Sign-up request.');

export const updateMeBody = z
  .object({
    name: nameSchema.optional(),
    password: passwordSchema
      .optional()
      .describe(
        'New password, 12 to 200 characters; needs current_password, unless the account was created without a password (setup, bootstrap).',
      ),
    current_password: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('The present password; required when password is given and the account has one.'),
  })
  .strict()
  .describe('Changes to the signed-in account.');

export const verifyEmailBody = z
  .object({ token: z.string().min(1).max(200).describe('Token from the verification email.') })
  .strict()
  .describe('Email verification request.');

export type SignUpInput = z.infer<typeof signUpBody>;
export type UpdateMeInput = z.infer<typeof updateMeBody>;
