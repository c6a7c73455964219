import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Deps } from '../context';
import {
  allDestinations,
  claimGate,
  enabledPolicies,
  findNotificationById,
  insertAttempt,
  moreSpecific,
  type PolicyWithDestinations,
  policyMatches,
  takeWindowSlot,
} from '../modules/alerts/index';
import { defineJob } from './define';
import type { JobHandler } from './queue';

const payload = z.object({
  notificationId: z.string().uuid(),
  seq: z.number().int().min(1),
  reason: z.enum(['open', 'reopen', 'escalate', 'repeat']),
});

declare module './queue' {
  interface JobPayloads {
    'alerts.dispatch': typeof payload;
  }
}

/**
 * One send decision for a notification: match the enabled policies, unite their destinations,
 * and for each destination claim the gate (send rules and throttles) and queue one attempt.
 */
const dispatchNotification =
  (deps: Deps): JobHandler<'alerts.dispatch'> =>
  async ({ notificationId, seq, reason }) => {
    const n = await findNotificationById(deps.db, notificationId);
    if (!n) return;
    // Never while acknowledged; a resolved one only mails when it is born resolved (a recovery).
    if (n.lifecycleState === 'acknowledged') return;
    if (n.lifecycleState === 'resolved' && n.notificationType !== 'pipeline_run_recovered') return;

    const policies = (await enabledPolicies(deps.db, n.organizationId)).filter((p) => policyMatches(p, n));
    if (policies.length === 0) return;
    // A delivery failure is never routed to the destination that failed.
    const excluded = new Set(
      n.notificationType === 'alert_delivery_failed'
        ? n.sourceRefs.filter((r) => r.kind === 'destination').map((r) => r.value)
        : [],
    );
    const credited = new Map<string, PolicyWithDestinations>();
    for (const p of policies) {
      for (const d of p.destinations) {
        const prev = credited.get(d.id);
        credited.set(d.id, prev ? moreSpecific(prev, p) : p);
      }
    }
    const destinations = (await allDestinations(deps.db, n.organizationId)).filter(
      (d) => credited.has(d.id) && d.enabled && !excluded.has(d.slug),
    );
    const cfg = deps.config.alerts;
    for (const d of destinations) {
      await deps.db.transaction(async (tx) => {
        const now = deps.clock?.() ?? new Date();
        const claimed = await claimGate(tx, {
          notificationId: n.id,
          destinationId: d.id,
          seq,
          reason,
          now,
          repeatMs: cfg.repeatHours * 3600_000,
          reopenQuietMs: cfg.reopenQuietMinutes * 60_000,
        });
        if (!claimed) return;
        const slot = await takeWindowSlot(tx, d.id, now, cfg.destinationHourlyCap);
        if (!slot.allowed) {
          deps.log.warn({ destination: d.slug, notification: n.slug }, 'alert held back by the hourly cap');
          return;
        }
        const attempt = await insertAttempt(tx, {
          organizationId: n.organizationId,
          notificationId: n.id,
          deliveryId: randomUUID(),
          destinationId: d.id,
          alertPolicySlug: credited.get(d.id)?.slug ?? null,
          destinationSlug: d.slug,
          destinationName: d.name,
          destinationType: d.type,
          reason,
          heldBack: slot.heldBack,
          providerAttempt: 1,
          queuedAt: now,
          createdAt: now,
          updatedAt: now,
        });
        await deps.queue.enqueue(tx, 'alerts.deliver', { attemptId: attempt.id });
      });
    }
  };

export const alertDispatchJob = defineJob({
  name: 'alerts.dispatch',
  payload,
  policy: { retry: { limit: 3, delaySeconds: 10, backoff: true }, expireInSeconds: 120 },
  handler: dispatchNotification,
});
