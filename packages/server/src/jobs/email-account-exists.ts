import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../context';
import { users } from '../db/schema/index';
import { defineJob } from './define';
import type { JobHandler } from './queue';

const payload = z.object({ userId: z.string().uuid() });

declare module './queue' {
  interface JobPayloads {
    'email.account_exists': typeof payload;
  }
}

/**
 * A sign-up with an address that already has an account answers like any sign-up (docs/account.md:
 * the answer never says whether an address is registered); the owner of the address is told here.
 */
const sendAccountExistsEmail =
  (deps: Deps): JobHandler<'email.account_exists'> =>
  async ({ userId }) => {
    const [user] = await deps.db.select().from(users).where(eq(users.id, userId)).limit(1);
    if (!user) return;
    await deps.mailer.send({
      to: user.email,
      subject: 'Someone tried to sign up to Sluice with your address',
      text: [
        'Someone tried to create a Sluice account with this email address, which already has one.',
        'No new account was made and nothing about your account changed.',
        '',
        `If it was you, sign in instead: ${deps.config.publicUrl}/sign-in`,
        'If you forgot your password, an administrator of this Sluice server can set a new one',
        '(sluice users set-password).',
        '',
        'If it was not you, ignore this mail.',
      ].join('\n'),
    });
  };

export const emailAccountExistsJob = defineJob({
  name: 'email.account_exists',
  payload,
  policy: { retry: { limit: 5, delaySeconds: 5, backoff: true }, expireInSeconds: 120 },
  handler: sendAccountExistsEmail,
});
