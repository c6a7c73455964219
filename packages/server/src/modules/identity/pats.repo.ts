import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { personalAccessTokens } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type PatRow = typeof personalAccessTokens.$inferSelect;

// Every query filters by the owner: a token of another user does not exist for the caller.
const mine = (userId: string, slug: string) =>
  and(eq(personalAccessTokens.userId, userId), eq(personalAccessTokens.slug, slug));

export async function listPats(db: DbOrTx, userId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      personal_access_token_created_at: { column: personalAccessTokens.createdAt, kind: 'timestamp' },
      personal_access_token_updated_at: { column: personalAccessTokens.updatedAt, kind: 'timestamp' },
      personal_access_token_name: { column: personalAccessTokens.name, kind: 'text' },
    },
    tiebreak: personalAccessTokens.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(personalAccessTokens)
        .where(and(eq(personalAccessTokens.userId, userId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({
      value:
        query.sort_by === 'personal_access_token_name'
          ? r.name
          : query.sort_by === 'personal_access_token_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: r.slug,
    }),
  });
}

export async function findPat(db: DbOrTx, userId: string, slug: string): Promise<PatRow | null> {
  const [row] = await db.select().from(personalAccessTokens).where(mine(userId, slug)).limit(1);
  return row ?? null;
}

export async function patSlugTaken(db: DbOrTx, userId: string, slug: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(personalAccessTokens)
    .where(mine(userId, slug))
    .limit(1);
  return Boolean(row);
}

export async function insertPat(db: DbOrTx, values: typeof personalAccessTokens.$inferInsert) {
  const [row] = await db.insert(personalAccessTokens).values(values).returning();
  return row;
}

export async function updatePat(db: DbOrTx, id: string, values: { name?: string }) {
  const [row] = await db
    .update(personalAccessTokens)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(personalAccessTokens.id, id))
    .returning();
  return row;
}

export async function deletePat(db: DbOrTx, id: string) {
  await db.delete(personalAccessTokens).where(eq(personalAccessTokens.id, id));
}
