import { and, desc, eq, like, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { pipelineVersions } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type VersionRow = typeof pipelineVersions.$inferSelect;

// A list cursor needs a slug-shaped identifier: 16 hex characters of the hash are one, and
// unique among one pipeline's versions for all practical purposes (64 bits).
export const CURSOR_ID_LENGTH = 16;
const cursorId = sql`left(${pipelineVersions.specHash}, ${sql.raw(String(CURSOR_ID_LENGTH))})`;

export async function listVersions(db: DbOrTx, pipelineId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: { version_created_at: { column: pipelineVersions.createdAt, kind: 'timestamp' } },
    tiebreak: cursorId,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(pipelineVersions)
        .where(and(eq(pipelineVersions.pipelineId, pipelineId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.createdAt, id: r.specHash.slice(0, CURSOR_ID_LENGTH) }),
  });
}

export async function findVersion(db: DbOrTx, pipelineId: string, specHash: string) {
  const [row] = await db
    .select()
    .from(pipelineVersions)
    .where(and(eq(pipelineVersions.pipelineId, pipelineId), eq(pipelineVersions.specHash, specHash)))
    .limit(1);
  return row ?? null;
}

/** Up to two versions whose hash starts with `prefix` (lowercase hex only: no LIKE wildcards). */
export async function versionsByPrefix(db: DbOrTx, pipelineId: string, prefix: string) {
  return db
    .select()
    .from(pipelineVersions)
    .where(and(eq(pipelineVersions.pipelineId, pipelineId), like(pipelineVersions.specHash, `${prefix}%`)))
    .limit(2);
}

/** Versions newest first, a page at a time (for looking up which operations a ref served). */
export async function versionsNewestFirst(db: DbOrTx, pipelineId: string, limit: number, offset: number) {
  return db
    .select()
    .from(pipelineVersions)
    .where(eq(pipelineVersions.pipelineId, pipelineId))
    .orderBy(desc(pipelineVersions.createdAt), desc(pipelineVersions.id))
    .limit(limit)
    .offset(offset);
}

export async function insertVersion(db: DbOrTx, values: typeof pipelineVersions.$inferInsert) {
  const [row] = await db.insert(pipelineVersions).values(values).returning();
  return row;
}
