import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { runtimeVariables } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type VariableRow = typeof runtimeVariables.$inferSelect;

// Cursor identifiers must look like slugs: the key's lowercase hex does and keeps its byte order.
const keyHex: SQL = sql`encode(convert_to(${runtimeVariables.key}, 'UTF8'), 'hex')`;
// Keys are identifiers: order them by code point on every store, not by the database locale.
const keyOrder: SQL = sql`${runtimeVariables.key} collate "C"`;
const hexOf = (key: string) => Buffer.from(key, 'utf8').toString('hex');

export async function listVariables(db: DbOrTx, environmentId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      runtime_variable_created_at: { column: runtimeVariables.createdAt, kind: 'timestamp' },
      runtime_variable_updated_at: { column: runtimeVariables.updatedAt, kind: 'timestamp' },
      runtime_variable_key: { column: keyOrder, kind: 'text' },
    },
    tiebreak: keyHex,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(runtimeVariables)
        .where(and(eq(runtimeVariables.environmentId, environmentId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({
      value:
        query.sort_by === 'runtime_variable_key'
          ? r.key
          : query.sort_by === 'runtime_variable_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: hexOf(r.key),
    }),
  });
}

export async function findVariable(
  db: DbOrTx,
  environmentId: string,
  key: string,
): Promise<VariableRow | null> {
  const [row] = await db
    .select()
    .from(runtimeVariables)
    .where(and(eq(runtimeVariables.environmentId, environmentId), eq(runtimeVariables.key, key)))
    .limit(1);
  return row ?? null;
}

export async function variablesOf(db: DbOrTx, organizationId: string, environmentId: string) {
  return db
    .select({ key: runtimeVariables.key, value: runtimeVariables.value })
    .from(runtimeVariables)
    .where(
      and(
        eq(runtimeVariables.organizationId, organizationId),
        eq(runtimeVariables.environmentId, environmentId),
      ),
    )
    .orderBy(keyOrder);
}

export async function insertVariable(db: DbOrTx, values: typeof runtimeVariables.$inferInsert) {
  const [row] = await db.insert(runtimeVariables).values(values).returning();
  return row;
}

export async function updateVariable(
  db: DbOrTx,
  id: string,
  values: { value: string; description?: string | null },
) {
  const [row] = await db
    .update(runtimeVariables)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(runtimeVariables.id, id))
    .returning();
  return row;
}

export async function deleteVariable(db: DbOrTx, id: string) {
  await db.delete(runtimeVariables).where(eq(runtimeVariables.id, id));
}
