import { and, desc, eq, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { proofCandidates, proofObservations, proofReceipts, proofSettings } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type SettingsRow = typeof proofSettings.$inferSelect;
export type ObservationRow = typeof proofObservations.$inferSelect;
export type CandidateRow = typeof proofCandidates.$inferSelect;
export type ReceiptRow = typeof proofReceipts.$inferSelect;

export async function findSettings(db: DbOrTx, dataSourceId: string): Promise<SettingsRow | null> {
  const [row] = await db.select().from(proofSettings).where(eq(proofSettings.dataSourceId, dataSourceId));
  return row ?? null;
}

/** Locks the settings row: receipts of one data source are chained one at a time. */
export async function lockSettings(tx: Tx, dataSourceId: string): Promise<SettingsRow | null> {
  const [row] = await tx
    .select()
    .from(proofSettings)
    .where(eq(proofSettings.dataSourceId, dataSourceId))
    .for('update');
  return row ?? null;
}

export async function upsertSettings(
  db: DbOrTx,
  values: Omit<typeof proofSettings.$inferInsert, 'id' | 'createdAt' | 'updatedAt'>,
): Promise<{ row: SettingsRow; created: boolean }> {
  const { organizationId, dataSourceId, ...set } = values;
  const [row] = await db
    .insert(proofSettings)
    .values(values)
    .onConflictDoUpdate({ target: proofSettings.dataSourceId, set: { ...set, updatedAt: new Date() } })
    .returning({ id: proofSettings.id, inserted: sql<boolean>`(xmax = 0)` });
  return { row: (await findSettings(db, dataSourceId))!, created: row.inserted };
}

export async function insertObservation(db: DbOrTx, values: typeof proofObservations.$inferInsert) {
  const [row] = await db.insert(proofObservations).values(values).returning();
  return row;
}

export async function findObservation(db: DbOrTx, dataSourceId: string, slug: string) {
  const [row] = await db
    .select()
    .from(proofObservations)
    .where(and(eq(proofObservations.dataSourceId, dataSourceId), eq(proofObservations.slug, slug)));
  return row ?? null;
}

export async function lockObservationById(tx: Tx, id: string) {
  const [row] = await tx.select().from(proofObservations).where(eq(proofObservations.id, id)).for('update');
  return row ?? null;
}

export async function findObservationById(db: DbOrTx, id: string) {
  const [row] = await db.select().from(proofObservations).where(eq(proofObservations.id, id));
  return row ?? null;
}

export async function finishObservation(
  db: DbOrTx,
  id: string,
  values: Partial<typeof proofObservations.$inferInsert>,
) {
  await db.update(proofObservations).set(values).where(eq(proofObservations.id, id));
}

export async function listObservations(db: DbOrTx, dataSourceId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: { observation_created_at: { column: proofObservations.createdAt, kind: 'timestamp' } },
    tiebreak: proofObservations.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(proofObservations)
        .where(and(eq(proofObservations.dataSourceId, dataSourceId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

/** The candidate for a repository and commit, made on its first observation. */
export async function candidateFor(
  db: DbOrTx,
  v: {
    organizationId: string;
    dataSourceId: string;
    slug: string;
    repositoryId: string;
    commitSha: string;
    ref: string | null;
  },
): Promise<CandidateRow> {
  await db.insert(proofCandidates).values(v).onConflictDoNothing();
  const [row] = await db
    .select()
    .from(proofCandidates)
    .where(
      and(
        eq(proofCandidates.dataSourceId, v.dataSourceId),
        eq(proofCandidates.repositoryId, v.repositoryId),
        eq(proofCandidates.commitSha, v.commitSha),
      ),
    );
  return row;
}

export async function findCandidate(db: DbOrTx, dataSourceId: string, slug: string) {
  const [row] = await db
    .select()
    .from(proofCandidates)
    .where(and(eq(proofCandidates.dataSourceId, dataSourceId), eq(proofCandidates.slug, slug)));
  return row ?? null;
}

export async function candidateSlugs(db: DbOrTx, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: proofCandidates.id, slug: proofCandidates.slug })
    .from(proofCandidates)
    .where(sql`${proofCandidates.id} in ${ids}`);
  return new Map(rows.map((r) => [r.id, r.slug]));
}

export async function lastReceipt(db: DbOrTx, dataSourceId: string): Promise<ReceiptRow | null> {
  const [row] = await db
    .select()
    .from(proofReceipts)
    .where(eq(proofReceipts.dataSourceId, dataSourceId))
    .orderBy(desc(proofReceipts.sequence))
    .limit(1);
  return row ?? null;
}

export async function insertReceipt(db: DbOrTx, values: typeof proofReceipts.$inferInsert) {
  const [row] = await db.insert(proofReceipts).values(values).returning();
  return row;
}

export async function setReceiptCheck(db: DbOrTx, id: string, check: Record<string, unknown>) {
  await db.update(proofReceipts).set({ check, updatedAt: new Date() }).where(eq(proofReceipts.id, id));
}

export async function findReceipt(db: DbOrTx, dataSourceId: string, slug: string) {
  const [row] = await db
    .select()
    .from(proofReceipts)
    .where(and(eq(proofReceipts.dataSourceId, dataSourceId), eq(proofReceipts.slug, slug)));
  return row ?? null;
}

export async function listReceipts(db: DbOrTx, dataSourceId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: { receipt_created_at: { column: proofReceipts.createdAt, kind: 'timestamp' } },
    tiebreak: proofReceipts.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(proofReceipts)
        .where(and(eq(proofReceipts.dataSourceId, dataSourceId), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}
