import { and, eq, isNotNull, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { contractRevisions, contracts, latestRevisionOfContract, pipelines } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type ContractRow = typeof contracts.$inferSelect;
export type RevisionRow = typeof contractRevisions.$inferSelect;
export type ContractView = ContractRow & { pipelineSlug: string };

const withPipeline = (db: DbOrTx) =>
  db
    .select({ contract: contracts, pipelineSlug: pipelines.slug })
    .from(contracts)
    .innerJoin(pipelines, eq(pipelines.id, contracts.pipelineId));
const flatten = (r: { contract: ContractRow; pipelineSlug: string }): ContractView => ({
  ...r.contract,
  pipelineSlug: r.pipelineSlug,
});

export async function listContracts(db: DbOrTx, projectId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: { contract_created_at: { column: contracts.createdAt, kind: 'timestamp' } },
    tiebreak: contracts.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await withPipeline(db)
          .where(and(eq(contracts.projectId, projectId), where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map(flatten),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

export async function findContract(db: DbOrTx, projectId: string, slug: string, lock = false) {
  const q = withPipeline(db).where(and(eq(contracts.projectId, projectId), eq(contracts.slug, slug)));
  const [row] = lock ? await q.for('update', { of: contracts }) : await q;
  return row ? flatten(row) : null;
}

export async function insertContract(db: DbOrTx, values: typeof contracts.$inferInsert) {
  const [row] = await db.insert(contracts).values(values).returning();
  return row;
}

export async function setLatestRevision(db: DbOrTx, id: string, slug: string, at: Date) {
  await db.update(contracts).set({ latestRevisionSlug: slug, updatedAt: at }).where(eq(contracts.id, id));
}

export async function listRevisions(db: DbOrTx, contractId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: { contract_revision_created_at: { column: contractRevisions.createdAt, kind: 'timestamp' } },
    tiebreak: contractRevisions.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(contractRevisions)
        .where(and(eq(contractRevisions.contractId, contractId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

export async function findRevision(db: DbOrTx, contractId: string, slug: string) {
  const [row] = await db
    .select()
    .from(contractRevisions)
    .where(and(eq(contractRevisions.contractId, contractId), eq(contractRevisions.slug, slug)));
  return row ?? null;
}

export async function insertRevision(db: DbOrTx, values: typeof contractRevisions.$inferInsert) {
  const [row] = await db.insert(contractRevisions).values(values).returning();
  return row;
}

export type LatestContract = { contract: ContractRow; revision: RevisionRow };

/** The latest revision of every contract on a pipeline's sinks (or of every pipeline matching `filter`). */
export async function latestContracts(db: DbOrTx, filter: SQL): Promise<LatestContract[]> {
  return db
    .select({ contract: contracts, revision: contractRevisions })
    .from(contracts)
    .innerJoin(contractRevisions, latestRevisionOfContract)
    .where(and(filter, isNotNull(contracts.latestRevisionSlug)));
}

export const ofPipeline = (pipelineId: string) => eq(contracts.pipelineId, pipelineId);
export const byContractId = (contractId: string) => eq(contracts.id, contractId);

export async function countRevisions(db: DbOrTx, contractId: string) {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(contractRevisions)
    .where(eq(contractRevisions.contractId, contractId));
  return Number(row?.n ?? 0);
}
