import { z } from 'zod';

// Client-side mirrors of the API's field bounds (packages/server/src/http/fields.ts): they only
// spare a round trip; the server validates again and its error wrapper is shown as is.
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const nameField = z.string().trim().min(1, 'Enter a name').max(100, 'At most 100 characters');
export const slugField = z
  .string()
  .max(100, 'At most 100 characters')
  .refine((v) => v === '' || SLUG_PATTERN.test(v), 'Lowercase letters and digits in hyphen-separated groups');
export const emailField = z.string().trim().min(3).max(255).email('Enter an email address');

/** Recipients typed one per line or separated by commas. */
export const splitList = (v: string) =>
  v
    .split(/[\s,;]+/)
    .map((s) => s.trim())
    .filter(Boolean);
