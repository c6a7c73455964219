import { and, desc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { dataSourceCredentials, dataSources } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type DataSourceRow = typeof dataSources.$inferSelect;
export type CredentialRow = typeof dataSourceCredentials.$inferSelect;

/**
 * The credential a data source shows and uses: the newest one not replaced. A revoked one has
 * no sealed value left, so it is shown (status `revoked`) but authenticates nothing.
 */
const CURRENT_STATUSES = ['active', 'failed', 'pending', 'revoked'];

export async function listDataSources(db: DbOrTx, organizationId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: {
      data_source_created_at: { column: dataSources.createdAt, kind: 'timestamp' },
      data_source_updated_at: { column: dataSources.updatedAt, kind: 'timestamp' },
      data_source_name: { column: dataSources.name, kind: 'text' },
    },
    tiebreak: dataSources.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(dataSources)
        .where(and(eq(dataSources.organizationId, organizationId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({
      value:
        query.sort_by === 'data_source_name'
          ? r.name
          : query.sort_by === 'data_source_updated_at'
            ? r.updatedAt
            : r.createdAt,
      id: r.slug,
    }),
  });
}

export async function findDataSource(
  db: DbOrTx,
  organizationId: string,
  slug: string,
): Promise<DataSourceRow | null> {
  const [row] = await db
    .select()
    .from(dataSources)
    .where(and(eq(dataSources.organizationId, organizationId), eq(dataSources.slug, slug)))
    .limit(1);
  return row ?? null;
}

export async function findDataSourceById(db: DbOrTx, id: string): Promise<DataSourceRow | null> {
  const [row] = await db.select().from(dataSources).where(eq(dataSources.id, id)).limit(1);
  return row ?? null;
}

/** Locks the row until the transaction ends, so concurrent imports and rotations serialize. */
export async function lockDataSource(tx: Tx, organizationId: string, slug: string) {
  const [row] = await tx
    .select()
    .from(dataSources)
    .where(and(eq(dataSources.organizationId, organizationId), eq(dataSources.slug, slug)))
    .limit(1)
    .for('update');
  return row ?? null;
}

export async function lockDataSourceById(tx: Tx, id: string) {
  const [row] = await tx.select().from(dataSources).where(eq(dataSources.id, id)).limit(1).for('update');
  return row ?? null;
}

export async function dataSourceSlugTaken(db: DbOrTx, organizationId: string, slug: string) {
  const [row] = await db
    .select({ one: sql`1` })
    .from(dataSources)
    .where(and(eq(dataSources.organizationId, organizationId), eq(dataSources.slug, slug)))
    .limit(1);
  return Boolean(row);
}

export async function insertDataSource(db: DbOrTx, values: typeof dataSources.$inferInsert) {
  const [row] = await db.insert(dataSources).values(values).returning();
  return row;
}

export type DataSourcePatch = Partial<
  Pick<
    typeof dataSources.$inferInsert,
    | 'name'
    | 'config'
    | 'isActive'
    | 'readOnly'
    | 'organizationGitlabConnection'
    | 'schemaStatus'
    | 'schema'
    | 'schemaDiagnostic'
    | 'schemaImportStartedAt'
    | 'schemaImportFinishedAt'
    | 'lastTestedAt'
    | 'testError'
  >
> & {
  bumpRevision?: boolean;
  /** false for bookkeeping (test results, imports) that is not an edit of the data source. */
  touch?: boolean;
};

export async function updateDataSource(db: DbOrTx, id: string, patch: DataSourcePatch) {
  const { bumpRevision, touch = true, ...values } = patch;
  const [row] = await db
    .update(dataSources)
    .set({
      ...values,
      ...(bumpRevision ? { connectionRevision: sql`${dataSources.connectionRevision} + 1` } : {}),
      ...(touch ? { updatedAt: new Date() } : {}),
    })
    .where(eq(dataSources.id, id))
    .returning();
  return row;
}

export async function deleteDataSource(db: DbOrTx, id: string) {
  await db.delete(dataSources).where(eq(dataSources.id, id));
}

/** Join condition: the credential row is the current one of `dataSources` (as currentCredential). */
export const isCurrentCredentialOf = (dataSourceId: typeof dataSources.id | SQL) =>
  eq(
    dataSourceCredentials.id,
    sql`(select c.id from data_source_credentials c
          where c.data_source_id = ${dataSourceId} and c.status in ${CURRENT_STATUSES}
          order by c.created_at desc limit 1)`,
  );

export async function currentCredential(db: DbOrTx, dataSourceId: string): Promise<CredentialRow | null> {
  const [row] = await db
    .select()
    .from(dataSourceCredentials)
    .where(
      and(
        eq(dataSourceCredentials.dataSourceId, dataSourceId),
        inArray(dataSourceCredentials.status, CURRENT_STATUSES),
      ),
    )
    .orderBy(desc(dataSourceCredentials.createdAt))
    .limit(1);
  return row ?? null;
}

/** Current credentials of many data sources at once (list responses). */
export async function currentCredentials(db: DbOrTx, dataSourceIds: string[]) {
  const out = new Map<string, CredentialRow>();
  if (dataSourceIds.length === 0) return out;
  const rows = await db
    .select()
    .from(dataSourceCredentials)
    .where(
      and(
        inArray(dataSourceCredentials.dataSourceId, dataSourceIds),
        inArray(dataSourceCredentials.status, CURRENT_STATUSES),
      ),
    )
    .orderBy(desc(dataSourceCredentials.createdAt));
  for (const r of rows) if (!out.has(r.dataSourceId)) out.set(r.dataSourceId, r);
  return out;
}

export async function insertCredential(db: DbOrTx, values: typeof dataSourceCredentials.$inferInsert) {
  const [row] = await db.insert(dataSourceCredentials).values(values).returning();
  return row;
}

/** Marks every current credential of the data source `rotated` (a new one replaces them). */
export async function rotateCredentials(db: DbOrTx, dataSourceId: string) {
  return db
    .update(dataSourceCredentials)
    .set({ status: 'rotated', updatedAt: new Date() })
    .where(
      and(
        eq(dataSourceCredentials.dataSourceId, dataSourceId),
        inArray(dataSourceCredentials.status, CURRENT_STATUSES),
      ),
    )
    .returning({ id: dataSourceCredentials.id });
}

export async function setCredentialStatus(db: DbOrTx, id: string, status: string) {
  await db
    .update(dataSourceCredentials)
    .set({ status, updatedAt: new Date() })
    .where(eq(dataSourceCredentials.id, id));
}
