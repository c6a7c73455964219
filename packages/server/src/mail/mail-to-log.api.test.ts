import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/support/app';
import { waitUntil } from '../../../../test/support/runs';
import { raiseNotification } from '../modules/notifications/notifications.raise';
import { LOGGED_MAIL_MESSAGE } from './mailer';

// Without SLUICE_SMTP_URL every mail (verification, invitation, alert) is one structured log
// line (recipients, subject, text), and an alert delivery is a `sent` attempt whose transport is
// `log` (docs/operations.md "Mail", docs/alerting.md). No password or API key reaches the log.

const org = '/organizations/acme';
const PASSWORD = 'canary-password-4d1f9a';

type MailLine = { msg: string; mail: { to: string[]; subject: string; text: string } };

describe('mail without SMTP', () => {
  let t: TestApp;
  let owner: string;
  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });
  const mails = (): MailLine[] =>
    t
      .logs()
      .split('\n')
      .filter((l) => l.includes(LOGGED_MAIL_MESSAGE))
      .map((l) => JSON.parse(l));
  const mailTo = (address: string) =>
    waitUntil(
      async () => mails().filter((m) => m.mail.to.includes(address)),
      (found) => found.length > 0,
      20_000,
    );

  beforeAll(async () => {
    t = await startTestApp({ worker: true });
    owner = (await t.bootstrap('acme')).api_key;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('writes a verification mail to the log as one line with its link', async () => {
    const res = await t.call('POST', '/users', {
      body: { email: 'newcomer@example.com', password: PASSWORD, name: 'New Comer' },
    });
    expect(res.statusCode).toBe(201);
    const [line] = await mailTo('newcomer@example.com');
    expect(line.mail.subject).toBe('Verify your Sluice email address');
    const token = /verify-email\?token=([0-9A-Za-z]+)/.exec(line.mail.text)?.[1];
    expect(token).toBeTruthy();
    // The logged link is the way to verify when there is no SMTP server.
    const ok = await t.call('POST', '/users/email-verification', { body: { token } });
    expect(ok.statusCode).toBe(200);
  });

  it('writes an invitation to the log', async () => {
    const inv = await call('POST', `${org}/invitations`, { email: 'guest@example.com', role: 'developer' });
    expect(inv.statusCode, inv.body).toBe(201);
    const [line] = await mailTo('guest@example.com');
    expect(line.mail.subject).toMatch(/^Join .* on Sluice$/);
    expect(line.mail.text).toContain(`/invitations/${inv.json().slug}`);
  });

  it('records an alert delivery as sent through the log, with nothing failed', async () => {
    expect(
      (
        await call('POST', `${org}/alert-destinations`, {
          name: 'ops',
          slug: 'ops',
          type: 'email',
          non_secret_config: { recipients: ['ops@example.com', 'lead@example.com'] },
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await call('POST', `${org}/alert-policies`, {
          name: 'All failures',
          scope: 'organization',
          notification_type: 'pipeline_run_failed',
          destination_slugs: ['ops'],
        })
      ).statusCode,
    ).toBe(201);
    const orgId = (await t.rt.deps.store.executeSql(`select id from organizations where slug = 'acme'`))
      .rows[0].id;
    const n = await t.rt.deps.db.transaction((tx) =>
      raiseNotification(tx, t.rt.deps, {
        organizationId: orgId,
        type: 'pipeline_run_failed',
        severity: 'error',
        title: 'Pipeline Orders failed in prod',
        summary: 'Run r failed (SOURCE_FAILED).',
        projectSlug: null,
        environmentSlug: null,
        subject: { kind: 'pipeline', slug: 'orders-sync' },
        sourceKind: 'pipeline_run',
        sourceAction: 'update',
        sourceRefs: [{ kind: 'pipeline', value: 'orders-sync' }],
        sourceKey: 'run:1',
      }),
    );
    const [line] = await mailTo('ops@example.com');
    expect(line.mail.to.sort()).toEqual(['lead@example.com', 'ops@example.com']);
    expect(line.mail.subject).toBe('[Sluice] error Pipeline Orders failed in prod');
    expect(line.mail.text).toContain(`/o/acme/notifications/${n.slug}`);

    const attempts = await waitUntil(
      async () =>
        (await call('GET', `${org}/notifications/${n.slug}/delivery-attempts`)).json()
          .alert_delivery_attempts,
      (a: any[]) => a.length > 0 && a.every((x) => x.status !== 'queued'),
      20_000,
    );
    expect(attempts).toEqual([
      expect.objectContaining({
        destination_slug: 'ops',
        status: 'sent',
        provider_attempt: 1,
        error_category: null,
        error_message: null,
        provider_response_metadata: expect.objectContaining({ transport: 'log', accepted_count: 2 }),
      }),
    ]);
    expect(attempts[0].sent_at).toEqual(expect.any(String));
    // Nothing failed, so nothing says so.
    const notices = (
      await call('GET', `${org}/notifications?notification_type=alert_delivery_failed`)
    ).json();
    expect(JSON.stringify(notices)).not.toContain('alert_delivery_failed');
  });

  it('keeps passwords and API keys out of the log', () => {
    expect(mails().length).toBeGreaterThanOrEqual(3);
    expect(t.logs()).not.toContain(PASSWORD);
    expect(t.logs()).not.toContain(owner);
  });
});
