import { createHash } from 'node:crypto';
import { and, desc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { timeOrderedId } from '../../db/ids';
import {
  environments,
  pipelineRuns,
  pipelines,
  pipelineTriggerOccurrences,
  pipelineTriggerSecrets,
  pipelineTriggers,
  webhookDeliveries,
} from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type TriggerRow = typeof pipelineTriggers.$inferSelect;
export type SecretRow = typeof pipelineTriggerSecrets.$inferSelect;
export type OccurrenceRow = typeof pipelineTriggerOccurrences.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type TriggerPlace = { organizationId: string; pipelineId: string; environmentId: string };

const inPlace = (p: TriggerPlace) =>
  and(
    eq(pipelineTriggers.organizationId, p.organizationId),
    eq(pipelineTriggers.pipelineId, p.pipelineId),
    eq(pipelineTriggers.environmentId, p.environmentId),
  );

export async function findTrigger(db: DbOrTx, place: TriggerPlace, slug: string, lock = false) {
  const q = db
    .select()
    .from(pipelineTriggers)
    .where(and(inPlace(place), eq(pipelineTriggers.slug, slug)))
    .limit(1);
  const [row] = lock ? await q.for('update') : await q;
  return row ?? null;
}

export async function findWebhookTrigger(db: DbOrTx, slug: string) {
  const [row] = await db
    .select()
    .from(pipelineTriggers)
    .where(and(eq(pipelineTriggers.kind, 'webhook'), eq(pipelineTriggers.slug, slug)))
    .limit(1);
  return row ?? null;
}

/** A slug is free when no trigger of the organization and no webhook anywhere uses it. */
export async function slugTaken(db: DbOrTx, organizationId: string, slug: string) {
  const [row] = await db
    .select({ id: pipelineTriggers.id })
    .from(pipelineTriggers)
    .where(
      and(
        eq(pipelineTriggers.slug, slug),
        or(eq(pipelineTriggers.organizationId, organizationId), eq(pipelineTriggers.kind, 'webhook')),
      ),
    )
    .limit(1);
  return Boolean(row);
}

export async function insertTrigger(tx: Tx, values: typeof pipelineTriggers.$inferInsert) {
  const [row] = await tx.insert(pipelineTriggers).values(values).onConflictDoNothing().returning();
  return row ?? null;
}

export async function updateTrigger(
  db: DbOrTx,
  id: string,
  patch: Partial<typeof pipelineTriggers.$inferInsert>,
) {
  const [row] = await db
    .update(pipelineTriggers)
    .set({ ...patch, updatedAt: new Date() })
    .where(eq(pipelineTriggers.id, id))
    .returning();
  return row;
}

export async function deleteTrigger(tx: Tx, id: string) {
  await tx.delete(pipelineTriggers).where(eq(pipelineTriggers.id, id));
}

export async function listTriggers(db: DbOrTx, place: TriggerPlace, query: ListQuery) {
  return paginate({
    query,
    sorts: { pipeline_trigger_created_at: { column: pipelineTriggers.createdAt, kind: 'timestamp' } },
    tiebreak: pipelineTriggers.slug,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(pipelineTriggers)
        .where(and(inPlace(place), where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

// ---- secrets --------------------------------------------------------------------------------

/** Secrets that still verify at `now`, newest first. */
export async function liveSecrets(db: DbOrTx, triggerId: string, now: Date): Promise<SecretRow[]> {
  return db
    .select()
    .from(pipelineTriggerSecrets)
    .where(
      and(
        eq(pipelineTriggerSecrets.triggerId, triggerId),
        or(isNull(pipelineTriggerSecrets.expiresAt), gt(pipelineTriggerSecrets.expiresAt, now)),
      ),
    )
    .orderBy(desc(pipelineTriggerSecrets.createdAt));
}

export async function secretsOf(db: DbOrTx, triggerIds: string[]): Promise<SecretRow[]> {
  if (triggerIds.length === 0) return [];
  return db
    .select()
    .from(pipelineTriggerSecrets)
    .where(inArray(pipelineTriggerSecrets.triggerId, triggerIds))
    .orderBy(desc(pipelineTriggerSecrets.createdAt));
}

export async function insertSecret(tx: Tx, values: typeof pipelineTriggerSecrets.$inferInsert) {
  await tx.insert(pipelineTriggerSecrets).values(values);
}

export async function expireSecret(tx: Tx, id: string, at: Date) {
  await tx.update(pipelineTriggerSecrets).set({ expiresAt: at }).where(eq(pipelineTriggerSecrets.id, id));
}

/** Secrets that can never verify again are deleted, so at most two rows exist per trigger. */
export async function deleteExpiredSecrets(tx: Tx, triggerId: string, now: Date) {
  await tx
    .delete(pipelineTriggerSecrets)
    .where(
      and(
        eq(pipelineTriggerSecrets.triggerId, triggerId),
        sql`${pipelineTriggerSecrets.expiresAt} <= ${now}`,
      ),
    );
}

export async function touchSecret(db: DbOrTx, id: string, at: Date) {
  await db
    .update(pipelineTriggerSecrets)
    .set({ lastVerifiedAt: at })
    .where(eq(pipelineTriggerSecrets.id, id));
}

// ---- occurrences ----------------------------------------------------------------------------

/** Inserts the ledger row unless one exists for that nominal time (then false). */
export async function insertOccurrence(tx: Tx, values: typeof pipelineTriggerOccurrences.$inferInsert) {
  const rows = await tx.insert(pipelineTriggerOccurrences).values(values).onConflictDoNothing().returning();
  return rows.length > 0;
}

export async function updateOccurrence(
  tx: Tx,
  triggerId: string,
  nominalAt: Date,
  patch: Partial<typeof pipelineTriggerOccurrences.$inferInsert>,
) {
  await tx
    .update(pipelineTriggerOccurrences)
    .set(patch)
    .where(
      and(
        eq(pipelineTriggerOccurrences.triggerId, triggerId),
        eq(pipelineTriggerOccurrences.nominalAt, nominalAt),
      ),
    );
}

const occurrenceCols = { o: pipelineTriggerOccurrences, runSlug: pipelineRuns.slug };

export async function latestOccurrences(db: DbOrTx, triggerIds: string[]) {
  const out = new Map<string, OccurrenceRow & { runSlug: string | null }>();
  if (triggerIds.length === 0) return out;
  const rows = await db
    .selectDistinctOn([pipelineTriggerOccurrences.triggerId], occurrenceCols)
    .from(pipelineTriggerOccurrences)
    .leftJoin(pipelineRuns, eq(pipelineRuns.id, pipelineTriggerOccurrences.runId))
    .where(inArray(pipelineTriggerOccurrences.triggerId, triggerIds))
    .orderBy(pipelineTriggerOccurrences.triggerId, desc(pipelineTriggerOccurrences.nominalAt));
  for (const r of rows) out.set(r.o.triggerId, { ...r.o, runSlug: r.runSlug });
  return out;
}

export async function listOccurrences(
  db: DbOrTx,
  triggerId: string,
  query: ListQuery & { outcome?: string },
) {
  return paginate({
    query,
    sorts: { occurrence_nominal_at: { column: pipelineTriggerOccurrences.nominalAt, kind: 'timestamp' } },
    tiebreak: pipelineTriggerOccurrences.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select(occurrenceCols)
          .from(pipelineTriggerOccurrences)
          .leftJoin(pipelineRuns, eq(pipelineRuns.id, pipelineTriggerOccurrences.runId))
          .where(
            and(
              eq(pipelineTriggerOccurrences.triggerId, triggerId),
              query.outcome ? eq(pipelineTriggerOccurrences.outcome, query.outcome) : undefined,
              where,
            ),
          )
          .orderBy(...orderBy)
          .limit(limit)
      ).map((r) => ({ ...r.o, runSlug: r.runSlug })),
    keyOf: (r) => ({ value: r.nominalAt, id: r.slug }),
  });
}

// ---- deliveries -----------------------------------------------------------------------------

const deliveryCols = { d: webhookDeliveries, runSlug: pipelineRuns.slug, runState: pipelineRuns.state };

export async function findDelivery(db: DbOrTx, triggerId: string, deliveryId: string) {
  const [r] = await db
    .select(deliveryCols)
    .from(webhookDeliveries)
    .leftJoin(pipelineRuns, eq(pipelineRuns.id, webhookDeliveries.runId))
    .where(and(eq(webhookDeliveries.triggerId, triggerId), eq(webhookDeliveries.deliveryId, deliveryId)))
    .limit(1);
  return r ? { ...r.d, runSlug: r.runSlug, runState: r.runState } : null;
}

/** Records a delivery, its id time-ordered as a run's (docs/operations.md#row-ids). */
export async function insertDelivery(tx: Tx, values: typeof webhookDeliveries.$inferInsert) {
  const rows = await tx
    .insert(webhookDeliveries)
    .values({ id: timeOrderedId(), ...values })
    .onConflictDoNothing()
    .returning();
  return rows[0] ?? null;
}

const deliveryCursorId = sql`left(md5(${webhookDeliveries.deliveryId}), 16)`;

export async function listDeliveries(db: DbOrTx, triggerId: string, query: ListQuery) {
  return paginate({
    query,
    sorts: { delivery_received_at: { column: webhookDeliveries.receivedAt, kind: 'timestamp' } },
    // Delivery ids may hold characters a cursor cannot, so a digest of the delivery id (unique
    // per trigger) breaks ties: a public identifier, never the row id. 16 hex characters, so a
    // cursor from when the row id (32) was used is told apart and refused.
    tiebreak: deliveryCursorId,
    idShape: /^[0-9a-f]{16}$/,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select(deliveryCols)
          .from(webhookDeliveries)
          .leftJoin(pipelineRuns, eq(pipelineRuns.id, webhookDeliveries.runId))
          .where(and(eq(webhookDeliveries.triggerId, triggerId), where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map((r) => ({ ...r.d, runSlug: r.runSlug })),
    keyOf: (r) => ({
      value: r.receivedAt,
      id: createHash('md5').update(r.deliveryId).digest('hex').slice(0, 16),
    }),
  });
}

export async function latestDeliveries(db: DbOrTx, triggerIds: string[]) {
  const out = new Map<string, DeliveryRow & { runSlug: string | null }>();
  if (triggerIds.length === 0) return out;
  const rows = await db
    .selectDistinctOn([webhookDeliveries.triggerId], deliveryCols)
    .from(webhookDeliveries)
    .leftJoin(pipelineRuns, eq(pipelineRuns.id, webhookDeliveries.runId))
    .where(inArray(webhookDeliveries.triggerId, triggerIds))
    .orderBy(webhookDeliveries.triggerId, desc(webhookDeliveries.receivedAt));
  for (const r of rows) out.set(r.d.triggerId, { ...r.d, runSlug: r.runSlug });
  return out;
}

// ---- runs of a trigger ----------------------------------------------------------------------

/** The newest run of the trigger that has not finished, or null. */
export async function activeRun(tx: Tx, triggerId: string) {
  const [row] = await tx
    .select({ id: pipelineRuns.id, slug: pipelineRuns.slug, state: pipelineRuns.state })
    .from(pipelineRuns)
    .where(
      and(
        eq(pipelineRuns.triggerId, triggerId),
        inArray(pipelineRuns.state, ['queued', 'running', 'canceling']),
      ),
    )
    .orderBy(desc(pipelineRuns.createdAt))
    .limit(1);
  return row ?? null;
}

/**
 * Claims one due schedule trigger on the given clock: locked for this transaction, skipped by
 * every other host's tick until it commits.
 */
export async function claimDueTrigger(tx: Tx, now: Date, skip: string[]): Promise<TriggerRow | null> {
  const [row] = await tx
    .select()
    .from(pipelineTriggers)
    .where(
      and(
        eq(pipelineTriggers.kind, 'schedule'),
        eq(pipelineTriggers.enabled, true),
        or(
          sql`${pipelineTriggers.nextFireAt} <= ${now}`,
          sql`${pipelineTriggers.bufferedNominalAt} is not null`,
        ),
        skip.length
          ? sql`${pipelineTriggers.id} <> all(${sql.raw(`array[${skip.map((s) => `'${s.replace(/[^0-9a-f-]/g, '')}'`).join(',')}]::uuid[]`)})`
          : undefined,
      ),
    )
    .orderBy(pipelineTriggers.nextFireAt)
    .limit(1)
    .for('update', { skipLocked: true });
  return row ?? null;
}

/** Pipeline and environment slugs of a trigger, for events and resources. */
export async function namesOf(db: DbOrTx, t: TriggerRow) {
  const [row] = await db
    .select({ pipelineSlug: pipelines.slug, environmentSlug: environments.slug })
    .from(pipelines)
    .innerJoin(environments, eq(environments.id, t.environmentId))
    .where(eq(pipelines.id, t.pipelineId));
  return row;
}
