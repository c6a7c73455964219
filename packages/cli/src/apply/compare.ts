import { ApiError } from '@sluice/client';

/** The current resource, or null on 404 (not there yet, or its parent is not). */
export async function orNull<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/**
 * The fields of `want` whose values differ from `have`, as dotted paths. Only what the file says
 * is compared: the server fills defaults the file leaves out, and those are not changes.
 */
export function changedFields(want: unknown, have: unknown, at = ''): string[] {
  if (want && typeof want === 'object' && !Array.isArray(want)) {
    if (!have || typeof have !== 'object' || Array.isArray(have)) return [at || '.'];
    return Object.entries(want).flatMap(([k, v]) =>
      v === undefined ? [] : changedFields(v, (have as Record<string, unknown>)[k], at ? `${at}.${k}` : k),
    );
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length) return [at || '.'];
    return want.flatMap((v, i) => changedFields(v, have[i], `${at}[${i}]`));
  }
  return want === have ? [] : [at || '.'];
}

export const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** Picks the defined fields of a document that a request body carries. */
export function pick(doc: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((f) => doc[f] !== undefined).map((f) => [f, doc[f]]));
}

/** Problems for missing or non-slug fields. */
export function requireSlugs(doc: Record<string, unknown>, fields: string[]): string[] {
  return fields.flatMap((f) =>
    typeof doc[f] === 'string' && /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(doc[f] as string)
      ? []
      : [`${f}: a slug is required (lowercase letters and digits in hyphen-separated groups)`],
  );
}
