import { environments } from '../../db/schema/index';
import type { ListQuery } from '../../http/pagination';

// How environment lists sort and page; the project's environment list pages the same way.

export type EnvironmentRow = typeof environments.$inferSelect;

export const environmentSortColumns = {
  environment_created_at: { column: environments.createdAt, kind: 'timestamp' },
  environment_updated_at: { column: environments.updatedAt, kind: 'timestamp' },
  environment_name: { column: environments.name, kind: 'text' },
} as const;

/** The cursor key of an environment under the list's sort. */
export function environmentKeyOf(query: ListQuery, r: EnvironmentRow) {
  return {
    value:
      query.sort_by === 'environment_name'
        ? r.name
        : query.sort_by === 'environment_updated_at'
          ? r.updatedAt
          : r.createdAt,
    id: r.slug,
  };
}
