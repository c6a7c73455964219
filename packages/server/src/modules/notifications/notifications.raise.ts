import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { Actor, Deps } from '../../context';
import type { DbOrTx } from '../../db/client';
import { notificationOccurrences, notifications, type SourceRef } from '../../db/schema/index';
import { randomSlug } from '../../http/fields';
import { type EntityType, type EventAction, recordEvent } from '../events/index';
import { type NotificationType, type Severity, severityRank } from './notifications.schemas';

// The one entry point other modules use to raise or resolve a notification. Call it with the
// transaction that records the source event, so the notification (and the dispatch job that
// mails it) commits or rolls back with it.

export type RaiseDeps = Pick<Deps, 'queue'> & { clock?: () => Date };

export type Subject = { kind: string; slug: string };

export type RaiseInput = {
  organizationId: string;
  type: NotificationType;
  severity: Severity;
  title: string;
  summary: string;
  projectSlug: string | null;
  environmentSlug: string | null;
  /** The stable thing that broke (the pipeline, never the run). */
  subject: Subject;
  sourceKind: EntityType;
  sourceAction: EventAction;
  sourceRefs: SourceRef[];
  /** Unique per source event (e.g. the run slug): a redelivered job counts once. */
  sourceKey: string;
  occurredAt?: Date;
  /** Occurrences in a row after which the severity becomes critical. */
  escalateAfter?: number;
  /** Born resolved (pipeline_run_recovered): every occurrence is its own send, nothing to resolve. */
  bornResolved?: boolean;
};

export type RaiseOutcome = 'opened' | 'reopened' | 'escalated' | 'counted' | 'duplicate' | 'stale';

export type DispatchReason = 'open' | 'reopen' | 'escalate' | 'repeat';

/** `type : project/environment : subject kind : subject slug` (docs/alerting.md#notifications). */
export function dedupKeyOf(
  type: NotificationType,
  projectSlug: string | null,
  environmentSlug: string | null,
  subject: Subject,
): string {
  const where = projectSlug ? (environmentSlug ? `${projectSlug}/${environmentSlug}` : projectSlug) : '-';
  return `${type}:${where}:${subject.kind}:${subject.slug}`;
}

/** dedupKeyOf for a subject of a project environment, as SQL over slug expressions (same text). */
export function placeDedupKeySql(
  type: NotificationType,
  projectSlug: SQL,
  environmentSlug: SQL,
  subjectKind: string,
  subjectSlug: SQL,
): SQL {
  return sql`(${`${type}:`}::text || ${projectSlug} || '/' || ${environmentSlug} || ${`:${subjectKind}:`}::text || ${subjectSlug})`;
}

async function lockByKey(tx: DbOrTx, organizationId: string, dedupKey: string) {
  const [row] = await tx
    .select()
    .from(notifications)
    .where(and(eq(notifications.organizationId, organizationId), eq(notifications.dedupKey, dedupKey)))
    .for('update');
  return row ?? null;
}

async function enqueueDispatch(
  tx: DbOrTx,
  deps: RaiseDeps,
  notificationId: string,
  seq: number,
  reason: DispatchReason,
) {
  await deps.queue.enqueue(tx, 'alerts.dispatch', { notificationId, seq, reason });
}

export async function raiseNotification(
  tx: DbOrTx,
  deps: RaiseDeps,
  input: RaiseInput,
): Promise<{ slug: string; outcome: RaiseOutcome }> {
  const now = deps.clock?.() ?? new Date();
  const at = input.occurredAt ?? now;
  const dedupKey = dedupKeyOf(input.type, input.projectSlug, input.environmentSlug, input.subject);
  const startSeverity: Severity = (input.escalateAfter ?? Infinity) <= 1 ? 'critical' : input.severity;

  let row = await lockByKey(tx, input.organizationId, dedupKey);
  if (!row) {
    const [created] = await tx
      .insert(notifications)
      .values({
        organizationId: input.organizationId,
        slug: randomSlug('ntf'),
        dedupKey,
        notificationType: input.type,
        severity: startSeverity,
        lifecycleState: input.bornResolved ? 'resolved' : 'open',
        title: input.title,
        summary: input.summary,
        projectSlug: input.projectSlug,
        environmentSlug: input.environmentSlug,
        sourceKind: input.sourceKind,
        sourceAction: input.sourceAction,
        sourceRefs: input.sourceRefs,
        firstSeenAt: at,
        lastSeenAt: at,
        resolvedAt: input.bornResolved ? at : null,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning();
    if (created) {
      await tx
        .insert(notificationOccurrences)
        .values({ notificationId: created.id, sourceKey: input.sourceKey, occurredAt: at });
      await enqueueDispatch(tx, deps, created.id, 1, 'open');
      return { slug: created.slug, outcome: 'opened' };
    }
    // Another transaction created it a moment ago: count against that one.
    row = await lockByKey(tx, input.organizationId, dedupKey);
    if (!row) throw new Error('notification vanished while raising');
  }

  const [fresh] = await tx
    .insert(notificationOccurrences)
    .values({ notificationId: row.id, sourceKey: input.sourceKey, occurredAt: at })
    .onConflictDoNothing()
    .returning();
  if (!fresh) return { slug: row.slug, outcome: 'duplicate' };

  const latest = at >= row.lastSeenAt;
  const base = {
    occurrenceCount: row.occurrenceCount + 1,
    lastSeenAt: latest ? at : row.lastSeenAt,
    ...(latest ? { title: input.title, summary: input.summary, sourceRefs: input.sourceRefs } : {}),
    updatedAt: now,
  };
  const update = (values: Partial<typeof notifications.$inferInsert>) =>
    tx.update(notifications).set(values).where(eq(notifications.id, row.id));

  if (input.bornResolved) {
    await update({ ...base, alertSeq: row.alertSeq + 1, resolvedAt: at, severity: startSeverity });
    await enqueueDispatch(tx, deps, row.id, row.alertSeq + 1, 'open');
    return { slug: row.slug, outcome: 'opened' };
  }
  if (row.lifecycleState === 'resolved') {
    // The Sentry race: an event older than the resolution counts but does not reopen.
    if (row.resolvedAt && at < row.resolvedAt) {
      await update(base);
      return { slug: row.slug, outcome: 'stale' };
    }
    await update({
      ...base,
      lifecycleState: 'open',
      reopenCount: row.reopenCount + 1,
      streak: 1,
      severity: startSeverity,
      acknowledgedAt: null,
      resolvedAt: null,
      alertSeq: row.alertSeq + 1,
    });
    await enqueueDispatch(tx, deps, row.id, row.alertSeq + 1, 'reopen');
    return { slug: row.slug, outcome: 'reopened' };
  }
  const streak = row.streak + 1;
  let severity: Severity = row.severity as Severity;
  if (severityRank(input.severity) > severityRank(severity)) severity = input.severity;
  if (input.escalateAfter !== undefined && streak >= input.escalateAfter) severity = 'critical';
  if (severityRank(severity) > severityRank(row.severity)) {
    await update({ ...base, streak, severity, alertSeq: row.alertSeq + 1 });
    await enqueueDispatch(tx, deps, row.id, row.alertSeq + 1, 'escalate');
    return { slug: row.slug, outcome: 'escalated' };
  }
  await update({ ...base, streak });
  // Mailed only when the repeat window has passed since the last send (the gate decides).
  await enqueueDispatch(tx, deps, row.id, row.alertSeq, 'repeat');
  return { slug: row.slug, outcome: 'counted' };
}

export type ResolveInput = {
  organizationId: string;
  type: NotificationType;
  projectSlug: string | null;
  environmentSlug: string | null;
  subject: Subject;
  /** Who resolved it; the system for an automatic resolution on the matching success. */
  actor?: Actor;
  requestId?: string | null;
};

/** Resolves the open or acknowledged notification of that key; true when one was resolved. */
export async function resolveNotification(tx: DbOrTx, deps: RaiseDeps, input: ResolveInput) {
  const dedupKey = dedupKeyOf(input.type, input.projectSlug, input.environmentSlug, input.subject);
  const now = deps.clock?.() ?? new Date();
  const [row] = await tx
    .update(notifications)
    .set({ lifecycleState: 'resolved', resolvedAt: now, updatedAt: now })
    .where(
      and(
        eq(notifications.organizationId, input.organizationId),
        eq(notifications.dedupKey, dedupKey),
        sql`${notifications.lifecycleState} <> 'resolved'`,
      ),
    )
    .returning();
  if (!row) return false;
  await recordEvent(
    tx,
    {
      organizationId: input.organizationId,
      actor: input.actor ?? { type: 'system', slug: null },
      requestId: input.requestId ?? null,
    },
    {
      entityType: 'notification',
      entitySlug: row.slug,
      action: 'resolve',
      metadata: { notification_type: row.notificationType, automatic: !input.actor },
    },
  );
  return true;
}
