import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../context';
import { emailVerificationTokens, users } from '../db/schema/index';
import { issueSecret } from '../http/tokens';
import { oneLine } from '../mail/mailer';
import { defineJob } from './define';
import type { JobHandler } from './queue';

const payload = z.object({ userId: z.string().uuid() });

declare module './queue' {
  interface JobPayloads {
    'email.verification': typeof payload;
  }
}

/**
 * The raw verification token is made here, at send time, so it never sits in the queue;
 * only its hash is stored.
 */
const sendVerificationEmail =
  (deps: Deps): JobHandler<'email.verification'> =>
  async ({ userId }) => {
    const [user] = await deps.db.select().from(users).where(eq(users.id, userId)).limit(1);
    if (!user || user.emailVerifiedAt) return;
    const { secret, hash } = issueSecret();
    const expiresAt = new Date(Date.now() + deps.config.verificationTtlHours * 3600_000);
    await deps.db.insert(emailVerificationTokens).values({ userId, tokenHash: hash, expiresAt });
    const link = `${deps.config.publicUrl}/verify-email?token=${secret}`;
    await deps.mailer.send({
      to: user.email,
      subject: 'Verify your Sluice email address',
      text: [
        `Hello ${oneLine(user.name)},`,
        '',
        'Confirm this address by opening:',
        link,
        '',
        'or by sending this token to POST /users/email-verification:',
        secret,
        '',
        `It expires in ${deps.config.verificationTtlHours} hours. If you did not sign up, ignore this mail.`,
      ].join('\n'),
    });
  };

export const emailVerificationJob = defineJob({
  name: 'email.verification',
  payload,
  policy: { retry: { limit: 5, delaySeconds: 5, backoff: true }, expireInSeconds: 120 },
  handler: sendVerificationEmail,
});
