import { and, eq, gte, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { events } from '../../db/schema/index';
import { recordEvent } from '../events/index';
import { alertTriggerFailed, type RaiseDeps } from '../notifications/index';

// docs/triggers.md#delivering: a burst of webhook signature failures (≥ 20 a minute on one trigger)
// raises pipeline_trigger_failed, recorded as one event per minute.

export const BURST_THRESHOLD = 20;
export const BURST_WINDOW_MS = 60_000;

export type BurstTrigger = {
  organizationId: string;
  slug: string;
  pipelineId: string;
  environmentId: string;
};

/**
 * After a refused delivery: counts the trigger's refusals in the last minute and, when they reach
 * the threshold and no burst was recorded in that minute, records a `pipeline_trigger` event with
 * outcome `refusal_burst` and raises pipeline_trigger_failed (warning) in the same transaction.
 * Returns whether a burst was recorded now.
 */
export async function detectRefusalBurst(
  db: DbOrTx,
  deps: RaiseDeps,
  t: BurstTrigger,
  now: Date,
): Promise<{ burst: boolean; refusals: number }> {
  const since = new Date(now.getTime() - BURST_WINDOW_MS);
  const mine = and(
    eq(events.organizationId, t.organizationId),
    eq(events.entityType, 'pipeline_trigger'),
    eq(events.entitySlug, t.slug),
    gte(events.occurredAt, since),
  );
  const [{ n }] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(events)
    .where(
      and(mine, eq(events.eventClass, 'security_audit'), sql`${events.metadata}->>'outcome' = 'refused'`),
    );
  if (n < BURST_THRESHOLD) return { burst: false, refusals: n };
  const [{ b }] = await db
    .select({ b: sql<number>`count(*)::int` })
    .from(events)
    .where(and(mine, sql`${events.metadata}->>'outcome' = 'refusal_burst'`));
  if (b > 0) return { burst: false, refusals: n };
  await recordEvent(
    db,
    { organizationId: t.organizationId, actor: { type: 'system', slug: null }, requestId: null },
    {
      entityType: 'pipeline_trigger',
      entitySlug: t.slug,
      action: 'execute',
      security: true,
      metadata: { outcome: 'refusal_burst', refusals_last_minute: n, threshold: BURST_THRESHOLD },
    },
  );
  await alertTriggerFailed(db, deps, t, {
    severity: 'warning',
    reason: `${n} webhook deliveries were refused in the last minute (signature, timestamp or id checks failed).`,
    sourceKey: `trigger:${t.slug}:burst:${now.toISOString().slice(0, 16)}`,
  });
  return { burst: true, refusals: n };
}
