import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { validationFailed } from './errors';

// The list contract (docs/api-conventions.md#lists-and-pagination): limit 1–100 (default 20),
// cursor "<ISO timestamp>_<identifier>" for time sorts and opaque "<base64url value>_<identifier>"
// for others, order asc|desc (default desc), direction next|prev (default next), only listed
// sort_by values.

export function listQuerySchema<const S extends readonly [string, ...string[]]>(sortBy: S) {
  return z
    .object({
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(100)
        .default(20)
        .describe('Page size, 1 to 100 (default 20).'),
      cursor: z
        .string()
        .min(1)
        .max(1000)
        .optional()
        .describe(
          '`next_cursor` or `prev_cursor` of a previous page. For time sorts `<timestamp>_<identifier>` (ISO 8601 UTC with milliseconds, then the identifier of the edge item); opaque for other sorts.',
        ),
      sort_by: z
        .enum(sortBy)
        .default(sortBy[0] as S[number])
        .describe(`Sort key; one of ${sortBy.join(', ')}.`),
      order: z.enum(['asc', 'desc']).default('desc').describe('Sort order (default desc).'),
      direction: z
        .enum(['next', 'prev'])
        .default('next')
        .describe('Walk forward from the cursor (next) or back before it (prev).'),
    })
    .strict();
}

export type ListQuery = {
  limit: number;
  cursor?: string;
  sort_by: string;
  order: 'asc' | 'desc';
  direction: 'next' | 'prev';
};

export type SortKey = { column: AnyColumn | SQL; kind: 'timestamp' | 'text' };

export type Page<T> = {
  items: T[];
  has_more: boolean;
  next_cursor: string | null;
  prev_cursor: string | null;
};

export const pageMeta = {
  has_more: z.boolean().describe('True when another page exists in the requested direction.'),
  next_cursor: z.string().nullable().describe('Pass as `cursor` to read the following page.'),
  prev_cursor: z
    .string()
    .nullable()
    .describe('Pass as `cursor` with `direction=prev` to read the preceding page.'),
};

/** The page fields of a list that is always complete (a catalog, one row per step). */
export const onePage = { has_more: false, next_cursor: null, prev_cursor: null } as const;

/** The list response schema: the items under a resource-specific key plus the page fields. */
export function listResponseSchema<K extends string, T extends z.ZodType>(key: K, item: T) {
  return z.object({ [key]: z.array(item), ...pageMeta } as { [P in K]: z.ZodArray<T> } & typeof pageMeta);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function encodeCursor(kind: SortKey['kind'], value: Date | string, id: string): string {
  const v =
    kind === 'timestamp'
      ? typeof value === 'string'
        ? value // already ISO (a list read with isoTimes, db/client.ts)
        : value.toISOString()
      : Buffer.from(String(value)).toString('base64url');
  return `${v}_${id}`;
}

function decodeCursor(kind: SortKey['kind'], cursor: string): { value: string; id: string } {
  const bad = () =>
    validationFailed([
      { path: 'cursor', code: 'invalid_cursor', message: 'cursor is not valid for this list and sort' },
    ]);
  // Identifiers are slugs (no underscore), so the last underscore separates the two parts.
  const at = cursor.lastIndexOf('_');
  if (at <= 0 || at === cursor.length - 1) throw bad();
  const raw = cursor.slice(0, at);
  const id = cursor.slice(at + 1);
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(id)) throw bad();
  if (kind === 'timestamp') {
    if (!ISO.test(raw) || Number.isNaN(Date.parse(raw))) throw bad();
    return { value: raw, id };
  }
  if (!/^[A-Za-z0-9_-]*$/.test(raw)) throw bad();
  const value = Buffer.from(raw, 'base64url').toString('utf8');
  if (Buffer.from(value).toString('base64url') !== raw) throw bad();
  return { value, id };
}

export type PaginateOptions<T> = {
  query: ListQuery;
  sorts: Record<string, SortKey>;
  /** Unique within the list; the cursor's identifier part. */
  tiebreak: AnyColumn | SQL;
  fetch(args: {
    where: SQL | undefined;
    orderBy: SQL[];
    limit: number;
    /** The decoded cursor (`where` as values), for a fetch that writes its own SQL. */
    cursor: { value: string; id: string } | undefined;
    /** Whether the rows are read in ascending order (order=asc, or desc walked back). */
    ascending: boolean;
  }): Promise<T[]>;
  keyOf(row: T): { value: Date | string; id: string };
  /**
   * The shape of this list's identifiers, when narrower than a slug: a cursor whose identifier
   * does not have it was issued by an earlier form of the list and is refused with a 400 that
   * says so, rather than read as a position it never named.
   */
  idShape?: RegExp;
};

/**
 * A page's size to write into a statement's text instead of binding it. With a bound limit a
 * statement's generic plan is costed for a tenth of the rows it may return (a thousand times a
 * page at 10M rows), so PostgreSQL planned every execution of such a statement for its
 * parameters instead (+0.3–0.4 ms a request on the 10M-row store, docs/benchmarks.md "History").
 * Written in, the generic plan costs what a custom one does and is kept. The numbers are few (a
 * page's limit + 1, of 2–101, and the rest of a page), so a shape has a bounded number of
 * statements.
 */
export function literalLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new Error(`page limit ${limit}`);
  return limit;
}

export async function paginate<T>(opts: PaginateOptions<T>): Promise<Page<T>> {
  const { query } = opts;
  const sort = opts.sorts[query.sort_by];
  if (!sort) {
    throw validationFailed([{ path: 'sort_by', code: 'invalid_enum_value', message: 'unknown sort_by' }]);
  }
  const backwards = query.direction === 'prev';
  // Walking back means reading in the opposite order and reversing the page afterwards.
  const ascending = (query.order === 'asc') !== backwards;

  let where: SQL | undefined;
  let cursor: { value: string; id: string } | undefined;
  if (query.cursor) {
    const c = decodeCursor(sort.kind, query.cursor);
    cursor = c;
    if (opts.idShape && !opts.idShape.test(c.id))
      throw validationFailed([
        {
          path: 'cursor',
          code: 'stale_cursor',
          message: 'cursor was issued by an earlier version of this list; start again without a cursor',
        },
      ]);
    const value = sort.kind === 'timestamp' ? sql`${c.value}::timestamptz` : sql`${c.value}::text`;
    const cmp = ascending ? sql`>` : sql`<`;
    where = sql`(${sort.column}, ${opts.tiebreak}) ${cmp} (${value}, ${c.id}::text)`;
  }

  const rows = await opts.fetch({
    where,
    // Built when read: a fetch on a prepared statement of its own never needs the fragments.
    get orderBy() {
      const dir = ascending ? sql`asc` : sql`desc`;
      return [sql`${sort.column} ${dir}`, sql`${opts.tiebreak} ${dir}`];
    },
    limit: query.limit + 1,
    cursor,
    ascending,
  });
  return pageOf(rows, query, (row) => {
    const k = opts.keyOf(row);
    return encodeCursor(sort.kind, k.value, k.id);
  });
}

/** The page of `limit + 1` rows read in walking order (the extra row only tells has_more). */
function pageOf<T>(rows: T[], query: ListQuery, cursorOf: (row: T) => string): Page<T> {
  const backwards = query.direction === 'prev';
  const more = rows.length > query.limit;
  const items = rows.slice(0, query.limit);
  if (backwards) items.reverse();
  const first = items[0];
  const last = items[items.length - 1];
  // Items exist beyond the cursor on the side we came from whenever a cursor was given.
  const hasAfter = backwards ? Boolean(query.cursor) : more;
  const hasBefore = backwards ? more : Boolean(query.cursor);
  return {
    items,
    has_more: more,
    next_cursor: last && hasAfter ? cursorOf(last) : null,
    prev_cursor: first && hasBefore ? cursorOf(first) : null,
  };
}

export type MemorySortKey<T> = { kind: SortKey['kind']; valueOf(row: T): Date | string };

/**
 * `paginate` over rows already in memory (small lists that mix stored and built-in items, such
 * as roles), with the same cursors, ordering and page rules. Text compares by code point.
 */
export function paginateInMemory<T>(opts: {
  query: ListQuery;
  sorts: Record<string, MemorySortKey<T>>;
  /** Unique within the list; the cursor's identifier part. */
  idOf(row: T): string;
  rows: readonly T[];
}): Page<T> {
  const { query } = opts;
  const sort = opts.sorts[query.sort_by];
  if (!sort) {
    throw validationFailed([{ path: 'sort_by', code: 'invalid_enum_value', message: 'unknown sort_by' }]);
  }
  const ascending = (query.order === 'asc') !== (query.direction === 'prev');
  const keyOf = (row: T): [number | string, string] => {
    const v = sort.valueOf(row);
    return [v instanceof Date ? v.getTime() : v, opts.idOf(row)];
  };
  const compare = (a: [number | string, string], b: [number | string, string]) => {
    const byValue = a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
    return byValue || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
  };
  const sign = ascending ? 1 : -1;
  let rows = [...opts.rows].sort((a, b) => sign * compare(keyOf(a), keyOf(b)));
  if (query.cursor) {
    const c = decodeCursor(sort.kind, query.cursor);
    const at: [number | string, string] = [sort.kind === 'timestamp' ? Date.parse(c.value) : c.value, c.id];
    rows = rows.filter((row) => sign * compare(keyOf(row), at) > 0);
  }
  return pageOf(rows.slice(0, query.limit + 1), query, (row) => {
    const v = sort.valueOf(row);
    return encodeCursor(sort.kind, v, opts.idOf(row));
  });
}
