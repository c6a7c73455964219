import { randomBytes } from 'node:crypto';
import { z } from 'zod';

// Shared field schemas of the common value types (docs/api-conventions.md).
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const slugSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(SLUG_PATTERN, 'must match ^[a-z0-9]+(?:-[a-z0-9]+)*$')
  .describe('External identifier: lowercase letters and digits in hyphen-separated groups.');
/**
 * Characters a name may not hold: C0 controls (CR, LF, TAB, …), DEL, C1 controls and the Unicode
 * line and paragraph separators. Names end up in mail text, logs and headers, where such a
 * character would start a line of the attacker's choosing.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** A name in a request (every `name`, `billing_name`, display name): 1 to 100 characters, no control characters. */
export const nameSchema = z
  .string()
  .min(1)
  .max(100)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  .regex(/^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/, 'must not contain control characters or line breaks')
  .describe('Display name, 1 to 100 characters, without control characters or line breaks.');
/** A name in an answer: what was stored, possibly before names refused control characters. */
export const storedNameSchema = z.string().describe('Display name.');
export const emailSchema = z.string().min(3).max(255).email().describe('Email address, 3 to 255 characters.');
export const timestampSchema = z.string().describe('ISO 8601 date-time.');
export const nullableTimestampSchema = z.string().nullable().describe('ISO 8601 date-time or null.');

/** A time as the API writes it; a string is one already written so (db/timestamptz.ts isoOfTimestamptz). */
export const iso = (d: Date | string) => (typeof d === 'string' ? d : d.toISOString());
export const isoOrNull = (d: Date | string | null | undefined) => (d ? iso(d) : null);

/** A slug derived from a name: lowercase ASCII words joined by hyphens, at most 60 characters. */
export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/g, '');
  return s || 'item';
}

const ALPHA = 'abcdefghijklmnopqrstuvwxyz0123456789';
export function randomSuffix(length = 6): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += ALPHA[b % ALPHA.length];
  return out;
}

export function randomSlug(prefix: string, length = 16): string {
  return `${prefix}-${randomSuffix(length)}`;
}

/**
 * A slug for the records every run adds (runs, events): `length` characters after the prefix, the
 * first seven the time (Unix seconds in base 36, sorting as the number does, until the year 4453),
 * the rest random (nine for a run's 16: two slugs of one second collide once in 10^14 pairs).
 * Slugs made later sort later, so the unique index over them takes new rows within the last
 * second's few entries, however many came before (docs/operations.md#row-ids).
 */
export function timeOrderedSlug(prefix: string, length = 16, now = Date.now()): string {
  return `${prefix}-${Math.floor(now / 1000)
    .toString(36)
    .padStart(7, '0')}${randomSuffix(length - 7)}`;
}

/** The `{organization}` path value: any 1–100 characters (docs/api-conventions.md#slugs). */
export const orgSlugParam = z.string().min(1).max(100).describe('Organization slug.');
export const orgParams = z.object({ organization: orgSlugParam }).strict();

/**
 * A path segment `:<param>:<verb>` (colon actions, `/keys/{slug}:rotate`; docs/api-conventions.md).
 * find-my-way needs the parameter constrained to tell `:rotate` from `:revoke` apart. The
 * constraint takes any (decoded) segment text, so a malformed slug reaches the route's params
 * schema and is 400 `VALIDATION_FAILED` as on `GET /keys/{slug}`, not a 405 from a route that did
 * not match.
 */
export const withVerb = (param: string, verb: string) => `:${param}(^[\\s\\S]+)::${verb}`;
