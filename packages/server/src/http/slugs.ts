import { randomSuffix, slugify } from './fields';

/**
 * The slug of a new resource: the client's when given (a clash is a 409 from the unique index),
 * otherwise derived from the name, with a random suffix when that is taken.
 */
export async function chooseSlug(
  requested: string | undefined,
  name: string,
  taken: (slug: string) => Promise<boolean>,
): Promise<string> {
  if (requested) return requested;
  const base = slugify(name);
  if (!(await taken(base))) return base;
  for (let i = 0; i < 5; i++) {
    const candidate = `${base.slice(0, 53)}-${randomSuffix(6)}`;
    if (!(await taken(candidate))) return candidate;
  }
  return `${base.slice(0, 40)}-${randomSuffix(16)}`;
}
