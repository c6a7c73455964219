import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../context';
import { invitations, organizations, users } from '../db/schema/index';
import { oneLine } from '../mail/mailer';
import { defineJob } from './define';
import type { JobHandler } from './queue';

const payload = z.object({ invitationId: z.string().uuid() });

declare module './queue' {
  interface JobPayloads {
    'email.invitation': typeof payload;
  }
}

const sendInvitationEmail =
  (deps: Deps): JobHandler<'email.invitation'> =>
  async ({ invitationId }) => {
    const [row] = await deps.db
      .select({ inv: invitations, org: organizations, inviter: users })
      .from(invitations)
      .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
      .leftJoin(users, eq(users.id, invitations.invitedByUserId))
      .where(eq(invitations.id, invitationId))
      .limit(1);
    if (row?.inv.status !== 'pending') return;
    const by = row.inviter ? `${oneLine(row.inviter.name)} invited you` : 'You are invited';
    const org = oneLine(row.org.name);
    await deps.mailer.send({
      to: row.inv.email,
      subject: `Join ${org} on Sluice`,
      text: [
        `${by} to join the organization "${org}" (${row.org.slug}) as ${row.inv.role}.`,
        '',
        `Accept: ${deps.config.publicUrl}/invitations/${row.inv.slug}`,
        `or with the API: POST /invitations/${row.inv.slug}:accept (signed in as ${row.inv.email}).`,
        '',
        `The invitation expires at ${row.inv.expiresAt.toISOString()}.`,
      ].join('\n'),
    });
  };

export const emailInvitationJob = defineJob({
  name: 'email.invitation',
  payload,
  policy: { retry: { limit: 5, delaySeconds: 5, backoff: true }, expireInSeconds: 120 },
  handler: sendInvitationEmail,
});
