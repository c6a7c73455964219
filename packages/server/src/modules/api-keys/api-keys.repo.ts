import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { apiKeys, users } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type ApiKeyRow = typeof apiKeys.$inferSelect & { createdByUserSlug: string | null };

const columns = {
  key: apiKeys,
  createdByUserSlug: users.slug,
};

function flatten(r: { key: typeof apiKeys.$inferSelect; createdByUserSlug: string | null }): ApiKeyRow {
  return { ...r.key, createdByUserSlug: r.createdByUserSlug };
}

export async function listApiKeys(db: DbOrTx, organizationId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      api_key_created_at: { column: apiKeys.createdAt, kind: 'timestamp' },
      api_key_updated_at: { column: apiKeys.updatedAt, kind: 'timestamp' },
      api_key_name: { column: apiKeys.name, kind: 'text' },
    },
    tiebreak: apiKeys.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select(columns)
          .from(apiKeys)
          .leftJoin(users, eq(users.id, apiKeys.createdByUserId))
          .where(and(eq(apiKeys.organizationId, organizationId), where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map(flatten),
    keyOf: (r) => ({
      value:
        query.sort_by === 'api_key_name'
          ? r.name
          : query.sort_by === 'api_key_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: r.slug,
    }),
  });
}

export async function findApiKey(
  db: DbOrTx,
  organizationId: string,
  slug: string,
): Promise<ApiKeyRow | null> {
  const [row] = await db
    .select(columns)
    .from(apiKeys)
    .leftJoin(users, eq(users.id, apiKeys.createdByUserId))
    .where(and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.slug, slug)))
    .limit(1);
  return row ? flatten(row) : null;
}

export async function apiKeySlugTaken(db: DbOrTx, organizationId: string, slug: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(apiKeys)
    .where(and(eq(apiKeys.organizationId, organizationId), eq(apiKeys.slug, slug)))
    .limit(1);
  return Boolean(row);
}

export async function insertApiKey(db: DbOrTx, values: typeof apiKeys.$inferInsert) {
  const [row] = await db.insert(apiKeys).values(values).returning();
  return row;
}

export async function updateApiKey(
  db: DbOrTx,
  id: string,
  values: Partial<
    Pick<typeof apiKeys.$inferInsert, 'name' | 'description' | 'tokenHash' | 'tokenPrefix' | 'revokedAt'>
  >,
) {
  const [row] = await db
    .update(apiKeys)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(apiKeys.id, id))
    .returning();
  return row;
}

export async function deleteApiKey(db: DbOrTx, id: string) {
  await db.delete(apiKeys).where(eq(apiKeys.id, id));
}
