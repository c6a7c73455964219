import type { QueryOf } from '../api';

// The path parameters the API's operations take, named as the OpenAPI document names them, so a
// screen's place passes straight into `params.path`.
export type OrgPath = { organization: string };
export type ProjectPath = OrgPath & { project: string };
export type EnvPath = ProjectPath & { environment: string };
export type PipelinePath = ProjectPath & { pipeline: string };
export type EnvPipelinePath = EnvPath & { pipeline: string };
export type DataSourcePath = OrgPath & { data_source: string };

/** The protected-environment confirmation, a query parameter of the operations that change one. */
export type Confirm = QueryOf<'deleteProjectsEnvironmentsPipelinesCheckpoints'>;

type CursorPage = { has_more: boolean; next_cursor: string | null };

/** Every item of a cursor-paged list (the API caps a page at 100; pickers need them all). */
export async function allPages<P extends CursorPage, T>(
  page: (cursor: string | undefined) => Promise<P>,
  items: (p: P) => T[],
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    all.push(...items(p));
    cursor = p.has_more ? (p.next_cursor ?? undefined) : undefined;
  } while (cursor);
  return all;
}
