import { z } from 'zod';
import { emailSchema, nameSchema, slugSchema, storedNameSchema, timestampSchema } from '../../http/fields';
import { isCountryCode } from './countries';

const text = (max: number, what: string) =>
  z.string().min(1).max(max).describe(`${what}, 1 to ${max} characters.`);
const optionalText = (max: number, what: string) =>
  z.string().max(max).nullable().optional().describe(`${what}, up to ${max} characters, or null.`);

export const countrySchema = z
  .string()
  .length(2)
  .refine(isCountryCode, { message: 'must be an assigned ISO 3166-1 alpha-2 country code in capitals' })
  .describe('Country: an assigned ISO 3166-1 alpha-2 code in capitals, exactly 2 characters (e.g. `DE`).');

const addressFields = {
  line1: text(255, 'First address line'),
  line2: optionalText(255, 'Second address line'),
  city: text(120, 'City'),
  region: optionalText(120, 'State, province or region'),
  postal_code: text(32, 'Postal code'),
};

export const addressInput = z
  .object({
    ...addressFields,
    country: countrySchema
      .optional()
      .describe(
        'Deprecated place of `country` (profiles used to keep it in the address), still accepted: give `country` beside `address` instead. When both are given they must be equal.',
      )
      .meta({ deprecated: true }),
  })
  .strict()
  .describe('Postal address for invoices (without the country, a field of the profile).');

export const putBillingProfileBody = z
  .object({
    billing_name: nameSchema.describe('Name invoices are made out to, 1 to 100 characters.'),
    billing_email: emailSchema.describe('Address invoices are sent to, 3 to 255 characters.'),
    address: addressInput,
    country: countrySchema
      .optional()
      .describe(
        'Country: an assigned ISO 3166-1 alpha-2 code in capitals, exactly 2 characters (e.g. `DE`). Required unless the deprecated `address.country` is given.',
      ),
    tax_id: z
      .string()
      .min(1)
      .max(64)
      .nullable()
      .optional()
      .describe('Tax or VAT identification number, 1 to 64 characters, or null (the default).'),
  })
  .strict()
  .superRefine((body, ctx) => {
    const legacy = body.address.country;
    if (body.country === undefined && legacy === undefined)
      ctx.addIssue({ code: 'custom', path: ['country'], message: 'is required' });
    else if (body.country !== undefined && legacy !== undefined && body.country !== legacy)
      ctx.addIssue({
        code: 'custom',
        path: ['address', 'country'],
        message: 'must equal `country` when both are given (`address.country` is its deprecated place)',
      });
  })
  .describe(
    'The whole billing profile; a PUT replaces every field. `country` is required: beside `address`, or (deprecated) as `address.country`.',
  );

export const billingProfileSchema = z
  .object({
    owner_type: z.enum(['user', 'organization']).describe('Whose profile this is.'),
    owner_slug: slugSchema.describe('Slug of the user or organization that owns the profile.'),
    billing_name: storedNameSchema.describe('Name invoices are made out to.'),
    billing_email: emailSchema.describe('Address invoices are sent to.'),
    address: z
      .object({
        line1: z.string().describe('First address line.'),
        line2: z.string().nullable().describe('Second address line, or null.'),
        city: z.string().describe('City.'),
        region: z.string().nullable().describe('State, province or region, or null.'),
        postal_code: z.string().describe('Postal code.'),
      })
      .describe('Postal address for invoices.'),
    country: z.string().describe('ISO 3166-1 alpha-2 country code, exactly 2 characters.'),
    tax_id: z.string().nullable().describe('Tax or VAT identification number, or null.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .describe('Billing profile of a user or an organization.');

export type PutBillingProfile = z.infer<typeof putBillingProfileBody>;

/** The profile's country, wherever the body gave it (the refinement above makes one present). */
export const countryOf = (input: PutBillingProfile): string =>
  (input.country ?? input.address.country) as string;
