import { z } from 'zod';
import type { Deps } from '../context';
import { sendAlertMail } from '../mail/alert-transport';
import { findDestinationById, mailDomain } from '../modules/alerts/index';
import { defineJob } from './define';
import type { JobHandler } from './queue';

const payload = z.object({ destinationId: z.string().uuid(), testId: z.string().min(1).max(64) });

declare module './queue' {
  interface JobPayloads {
    'alerts.destination_test': typeof payload;
  }
}

/**
 * A destination test: one real message through the real transport, no retry, no throttle, no
 * notification and no attempt record; the outcome goes to the log (codes only, never the body).
 */
const testAlertDestination =
  (deps: Deps): JobHandler<'alerts.destination_test'> =>
  async ({ destinationId, testId }) => {
    const dest = await findDestinationById(deps.db, destinationId);
    if (!dest || !deps.config.smtpUrl) return;
    const domain = mailDomain(deps.config.publicUrl);
    const text = [
      `This is a test message for the alert destination "${dest.name}" (${dest.slug}).`,
      'If you can read it, Sluice can deliver alerts here.',
      '',
      `Test id: ${testId}`,
    ].join('\n');
    const outcome = await sendAlertMail(deps.config.smtpUrl, deps.config.smtpFrom, {
      to: dest.nonSecretConfig.recipients,
      subject: `[Sluice test] ${testId} ${dest.name}`,
      text,
      html: `<p>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\n/g, '<br>')}</p>`,
      messageId: `<test-${testId}.destination@${domain}>`,
      references: `<test-${testId}.destination@${domain}>`,
    });
    const fields = {
      destination: dest.slug,
      testId,
      ok: outcome.ok,
      smtpResponseCode: outcome.responseCode,
      ...(outcome.ok ? {} : { failureClass: outcome.failureClass, errCode: outcome.code }),
    };
    if (outcome.ok) deps.log.info(fields, 'alert destination test delivered');
    else deps.log.warn(fields, 'alert destination test failed');
  };

export const alertDestinationTestJob = defineJob({
  name: 'alerts.destination_test',
  payload,
  policy: { retry: { limit: 0, delaySeconds: 0, backoff: false }, expireInSeconds: 120 },
  handler: testAlertDestination,
});
