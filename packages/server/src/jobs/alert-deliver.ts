import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../context';
import { organizations } from '../db/schema/index';
import { type SendOutcome, sendAlertMail } from '../mail/alert-transport';
import { logMail } from '../mail/mailer';
import {
  attemptMessageId,
  buildAlertMessage,
  failureMessage,
  findAttempt,
  findDestinationById,
  findNotificationById,
  insertAttempt,
  mailDomain,
  providerMetadata,
  threadRoot,
  updateAttempt,
} from '../modules/alerts/index';
import { raiseNotification, resolveNotification } from '../modules/notifications/index';
import { defineJob } from './define';
import type { JobHandler } from './queue';

const payload = z.object({ attemptId: z.string().uuid() });

declare module './queue' {
  interface JobPayloads {
    'alerts.deliver': typeof payload;
  }
}

const jitter = (seconds: number) => seconds * 1000 * (0.8 + Math.random() * 0.4);

/**
 * One try of one delivery: send outside any transaction, then record the result on the attempt
 * row, and queue the next try (a new row) or raise alert_delivery_failed, in one transaction.
 */
const deliverAlert =
  (deps: Deps): JobHandler<'alerts.deliver'> =>
  async ({ attemptId }) => {
    const attempt = await findAttempt(deps.db, attemptId);
    if (attempt?.status !== 'queued') return;
    const n = await findNotificationById(deps.db, attempt.notificationId);
    if (!n) return;
    const [org] = await deps.db.select().from(organizations).where(eq(organizations.id, n.organizationId));
    const dest = attempt.destinationId ? await findDestinationById(deps.db, attempt.destinationId) : null;
    const domain = mailDomain(deps.config.publicUrl);
    const messageId = attemptMessageId(attempt.slug, domain);

    let outcome: SendOutcome;
    const refused = (failureClass: 'configuration'): SendOutcome => ({
      ok: false,
      failureClass,
      retryable: false,
      rejected: [],
      durationMs: 0,
    });
    if (!dest?.enabled) outcome = refused('configuration');
    else {
      const msg = buildAlertMessage({
        notification: n,
        orgSlug: org.slug,
        publicUrl: deps.config.publicUrl,
        reason: attempt.reason,
        heldBack: attempt.heldBack,
        attemptSlug: attempt.slug,
      });
      const recipients = dest.nonSecretConfig.recipients;
      if (!deps.config.smtpUrl) {
        // No SMTP: the message goes to the log, as every other mail does (docs/alerting.md).
        logMail(deps.log, { to: recipients, subject: msg.subject, text: msg.text });
        outcome = { ok: true, transport: 'log', accepted: recipients, rejected: [], durationMs: 0 };
      } else
        outcome = await sendAlertMail(deps.config.smtpUrl, deps.config.smtpFrom, {
          to: recipients,
          subject: msg.subject,
          text: msg.text,
          html: msg.html,
          messageId,
          references: threadRoot(n, domain),
        });
    }

    await deps.db.transaction(async (tx) => {
      const current = await findAttempt(tx, attemptId, true);
      if (current?.status !== 'queued') return;
      const now = deps.clock?.() ?? new Date();
      const delays = deps.config.alerts.retryDelaysSeconds;
      const retry = !outcome.ok && outcome.retryable && current.providerAttempt <= delays.length;
      const nextAt = retry ? new Date(now.getTime() + jitter(delays[current.providerAttempt - 1])) : null;
      await updateAttempt(tx, current.id, {
        status: outcome.ok ? 'sent' : 'failed',
        providerResponseMetadata: providerMetadata(outcome, messageId, nextAt),
        errorCategory: outcome.ok ? null : 'EMAIL_DELIVERY_FAILED',
        errorMessage: outcome.ok
          ? null
          : !dest
            ? 'the destination was deleted'
            : !dest.enabled
              ? 'the destination is disabled'
              : failureMessage(outcome),
        sentAt: outcome.ok ? now : null,
        failedAt: outcome.ok ? null : now,
        updatedAt: now,
      });
      if (retry && nextAt) {
        const next = await insertAttempt(tx, {
          organizationId: current.organizationId,
          notificationId: current.notificationId,
          deliveryId: current.deliveryId,
          destinationId: current.destinationId,
          alertPolicySlug: current.alertPolicySlug,
          destinationSlug: current.destinationSlug,
          destinationName: current.destinationName,
          destinationType: current.destinationType,
          reason: current.reason,
          heldBack: current.heldBack,
          providerAttempt: current.providerAttempt + 1,
          queuedAt: now,
          createdAt: now,
          updatedAt: now,
        });
        const wait = nextAt.getTime() - now.getTime();
        await deps.queue.enqueue(
          tx,
          'alerts.deliver',
          { attemptId: next.id },
          wait >= 1000 ? { startAfter: new Date(Date.now() + wait) } : {},
        );
        return;
      }
      if (!current.destinationSlug) return;
      const subject = { kind: 'destination', slug: current.destinationSlug };
      if (outcome.ok) {
        await resolveNotification(tx, deps, {
          organizationId: current.organizationId,
          type: 'alert_delivery_failed',
          projectSlug: null,
          environmentSlug: null,
          subject,
        });
      } else if (n.notificationType !== 'alert_delivery_failed') {
        // Its own failure raises nothing further: no loop of failure notices.
        await raiseNotification(tx, deps, {
          organizationId: current.organizationId,
          type: 'alert_delivery_failed',
          severity: 'error',
          title: `Alert delivery to ${current.destinationName ?? current.destinationSlug} failed`,
          summary: `A message for "${n.title}" could not be delivered after ${current.providerAttempt} ${
            current.providerAttempt === 1 ? 'try' : 'tries'
          }.`,
          projectSlug: null,
          environmentSlug: null,
          subject,
          sourceKind: 'notification',
          sourceAction: 'update',
          sourceRefs: [
            { kind: 'destination', value: current.destinationSlug },
            { kind: 'notification', value: n.slug },
          ],
          sourceKey: `delivery:${current.deliveryId}`,
          occurredAt: now,
        });
      }
    });
  };

export const alertDeliverJob = defineJob({
  name: 'alerts.deliver',
  payload,
  // Only for a lost worker or a store error: the attempt row is still queued, so the same try
  // runs again. SMTP failures are recorded and retried as new attempt rows, never by the queue.
  policy: { retry: { limit: 2, delaySeconds: 30, backoff: false }, expireInSeconds: 180 },
  handler: deliverAlert,
});
