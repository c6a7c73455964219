import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { dataSources, queries, queryExecutions } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type QueryRow = typeof queries.$inferSelect & { dataSourceSlug: string; dataSourceType: string };
export type ExecutionRow = typeof queryExecutions.$inferSelect & { querySlug: string; statementType: string };

const queryColumns = { query: queries, dataSourceSlug: dataSources.slug, dataSourceType: dataSources.type };

const flattenQuery = (r: {
  query: typeof queries.$inferSelect;
  dataSourceSlug: string;
  dataSourceType: string;
}): QueryRow => ({ ...r.query, dataSourceSlug: r.dataSourceSlug, dataSourceType: r.dataSourceType });

export async function listQueries(db: DbOrTx, organizationId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      query_created_at: { column: queries.createdAt, kind: 'timestamp' },
      query_updated_at: { column: queries.updatedAt, kind: 'timestamp' },
      query_name: { column: queries.name, kind: 'text' },
    },
    tiebreak: queries.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select(queryColumns)
          .from(queries)
          .innerJoin(dataSources, eq(dataSources.id, queries.dataSourceId))
          .where(and(eq(queries.organizationId, organizationId), where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map(flattenQuery),
    keyOf: (r) => ({
      value:
        query.sort_by === 'query_name'
          ? r.name
          : query.sort_by === 'query_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: r.slug,
    }),
  });
}

export async function findQuery(db: DbOrTx, organizationId: string, slug: string): Promise<QueryRow | null> {
  const [row] = await db
    .select(queryColumns)
    .from(queries)
    .innerJoin(dataSources, eq(dataSources.id, queries.dataSourceId))
    .where(and(eq(queries.organizationId, organizationId), eq(queries.slug, slug)))
    .limit(1);
  return row ? flattenQuery(row) : null;
}

export async function querySlugTaken(db: DbOrTx, organizationId: string, slug: string): Promise<boolean> {
  const [row] = await db
    .select({ one: sql`1` })
    .from(queries)
    .where(and(eq(queries.organizationId, organizationId), eq(queries.slug, slug)))
    .limit(1);
  return Boolean(row);
}

export async function insertQuery(db: DbOrTx, values: typeof queries.$inferInsert) {
  const [row] = await db.insert(queries).values(values).returning();
  return row;
}

export async function updateQuery(
  db: DbOrTx,
  id: string,
  values: Partial<Pick<typeof queries.$inferInsert, 'name' | 'description' | 'dataSourceId' | 'statement'>>,
) {
  await db
    .update(queries)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(queries.id, id));
}

export async function deleteQuery(db: DbOrTx, id: string) {
  await db.delete(queries).where(eq(queries.id, id));
}

const executionColumns = {
  execution: queryExecutions,
  querySlug: queries.slug,
  statementType: sql<string>`${queries.statement}->>'type'`,
};

const flattenExecution = (r: {
  execution: typeof queryExecutions.$inferSelect;
  querySlug: string;
  statementType: string;
}) => ({ ...r.execution, querySlug: r.querySlug, statementType: r.statementType });

export async function listExecutions(db: DbOrTx, organizationId: string, queryId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: { query_execution_executed_at: { column: queryExecutions.executedAt, kind: 'timestamp' } },
    tiebreak: queryExecutions.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select(executionColumns)
          .from(queryExecutions)
          .innerJoin(queries, eq(queries.id, queryExecutions.queryId))
          .where(
            and(
              eq(queryExecutions.organizationId, organizationId),
              eq(queryExecutions.queryId, queryId),
              where,
            ),
          )
          .orderBy(...orderBy)
          .limit(limit)
      ).map(flattenExecution),
    keyOf: (r) => ({ value: r.executedAt, id: r.slug }),
  });
}

export async function findExecution(
  db: DbOrTx,
  organizationId: string,
  slug: string,
): Promise<ExecutionRow | null> {
  const [row] = await db
    .select(executionColumns)
    .from(queryExecutions)
    .innerJoin(queries, eq(queries.id, queryExecutions.queryId))
    .where(and(eq(queryExecutions.organizationId, organizationId), eq(queryExecutions.slug, slug)))
    .limit(1);
  return row ? flattenExecution(row) : null;
}

export async function insertExecution(db: DbOrTx, values: typeof queryExecutions.$inferInsert) {
  const [row] = await db.insert(queryExecutions).values(values).returning();
  return row;
}
