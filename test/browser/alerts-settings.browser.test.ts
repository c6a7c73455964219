import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppHost } from '../../packages/server/src/app-host/app-host';
import { setUserPassword } from '../../packages/server/src/modules/identity/set-password';
import { raiseNotification } from '../../packages/server/src/modules/notifications/notifications.raise';
import { type SmtpPeer, startSmtpPeer } from '../peers/smtp';
import { startTestApp, type TestApp } from '../support/app';
import { addMember, createUser, type TestUser } from '../support/users';
import { axeViolations, launchBrowser, screenshotBoth } from './browser';

const EMAIL = 'owner@example.com';
const PASSWORD = 'alerts-owner-password';

// The alerting and settings screens, end to end: one server with a worker, a real SMTP peer for
// the mail, the app host and one chromium.
describe('alerting and settings screens', { timeout: 180_000 }, () => {
  let smtp: SmtpPeer;
  let t: TestApp;
  let host: FastifyInstance;
  let base: string;
  let token: string;
  let teammate: TestUser;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let notificationSlug = '';
  const a11y: Record<string, string[]> = {};
  const api = (method: string, url: string, body?: unknown) => t.call(method, url, { token, body });

  /** Checks the current page with axe and photographs it in both colour schemes. */
  const check = async (name: string) => {
    a11y[name] = await axeViolations(page);
    await screenshotBoth(page, name);
  };
  const open = async (url: string, ready: string) => {
    await page.goto(`${base}${url}`);
    await page.locator(ready).first().waitFor();
  };

  beforeAll(async () => {
    smtp = await startSmtpPeer();
    t = await startTestApp({
      worker: true,
      env: { SLUICE_SMTP_URL: smtp.url, SLUICE_ALERT_RETRY_DELAYS_SECONDS: '0,0,0,0' },
    });
    token = (await t.bootstrap('acme', EMAIL)).api_key;
    await setUserPassword(t.rt.deps, { email: EMAIL, password: PASSWORD });
    expect((await api('POST', '/organizations/acme/projects', { slug: 'web', name: 'Web' })).statusCode).toBe(
      201,
    );
    expect(
      (await api('POST', '/organizations/acme/environments', { slug: 'staging', name: 'Staging' }))
        .statusCode,
    ).toBe(201);
    const enable = await api('PUT', '/organizations/acme/projects/web/environments/staging', {
      is_default: true,
    });
    expect(enable.statusCode, enable.body).toBeLessThan(300);
    teammate = await createUser(t, { email: 'teammate@example.com', name: 'Teammate' });
    await addMember(t, 'acme', teammate, 'viewer');
    host = await buildAppHost(t.rt.deps);
    await host.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
    const b = await launchBrowser();
    closeBrowser = b.close;
    const context = await b.browser.newContext({ viewport: { width: 1366, height: 860 } });
    page = await context.newPage();
    await page.goto(`${base}/sign-in`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
  }, 180_000);

  afterAll(async () => {
    await closeBrowser?.();
    await host?.close();
    await t?.close();
    await smtp?.close();
  });

  it('creates a destination from the form, keeping inputs after a refused save, and sends a test', async () => {
    await open('/o/acme/alerts/destinations', 'main h1');
    await page.getByRole('link', { name: 'Alert destinations' }).first().waitFor();
    await page.getByRole('link', { name: 'New destination' }).click();
    await page.getByLabel('Name').fill('Ops');
    await page.getByLabel('Recipients').fill('ops@example.com, not-an-address');
    await page.getByRole('button', { name: 'Create destination' }).click();
    await page.getByText('Not an email address: not-an-address').waitFor();
    expect(await page.getByLabel('Name').inputValue()).toBe('Ops');
    expect(await page.getByLabel('Recipients').getAttribute('aria-invalid')).toBe('true');
    await check('alert-destination-form');
    await page.getByLabel('Recipients').fill('ops@example.com\nlead@example.com');
    await page.getByRole('button', { name: 'Create destination' }).click();
    await page.locator('tr[data-destination="ops"]').waitFor();
    expect(new URL(page.url()).pathname).toBe('/o/acme/alerts/destinations');
    const made = (await api('GET', '/organizations/acme/alert-destinations/ops')).json();
    expect(made.non_secret_config.recipients).toEqual(['ops@example.com', 'lead@example.com']);

    // A test goes through the real SMTP peer: queued (202), then delivered to both recipients.
    await page.getByRole('button', { name: 'Send test to Ops' }).click();
    const result = page.getByTestId('destination-test-result');
    await expect.poll(() => result.textContent()).toMatch(/accepted.*ops.*2 recipients/);
    expect(await result.getAttribute('role')).toBe('status');
    const mail = await smtp.waitFor((m) => m.envelope.to.includes('ops@example.com'), 20_000);
    expect(mail.envelope.to.sort()).toEqual(['lead@example.com', 'ops@example.com']);
    await check('alert-destinations');

    // Without SMTP the server answers 422 EMAIL_NOT_CONFIGURED; the screen says what to do.
    const smtpUrl = t.rt.deps.config.smtpUrl;
    t.rt.deps.config.smtpUrl = undefined;
    try {
      await page.getByRole('link', { name: 'Ops', exact: true }).click();
      await page.getByRole('button', { name: 'Save destination' }).waitFor();
      await page.getByRole('button', { name: 'Send test to Ops' }).click();
      await expect.poll(() => result.textContent()).toContain('EMAIL_NOT_CONFIGURED');
      expect(await result.textContent()).toContain('SLUICE_SMTP_URL');
      expect(await result.getAttribute('role')).toBe('alert');
      await check('alert-destination-not-configured');
    } finally {
      t.rt.deps.config.smtpUrl = smtpUrl;
    }
  });

  it('creates and edits a policy with the scope rules checked in the form', async () => {
    await open('/o/acme/alerts/policies', 'main h1');
    await page.getByRole('link', { name: 'New policy' }).click();
    await page.getByLabel('Name').fill('Web staging failures');
    await page.getByLabel('Applies to').selectOption('project_environment');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.getByText('This scope needs a project').waitFor();
    await page.getByText('Pick at least one destination').waitFor();
    expect(await page.getByLabel('Name').inputValue()).toBe('Web staging failures');
    await page.getByLabel('Project').selectOption('web');
    await page.getByLabel('Environment').selectOption('staging');
    await page.getByLabel('Notification type').selectOption('pipeline_run_failed');
    await page.getByRole('checkbox', { name: /^Ops/ }).check();
    await check('alert-policy-form');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.locator('tr[data-policy="web-staging-failures"]').waitFor();
    const made = (await api('GET', '/organizations/acme/alert-policies/web-staging-failures')).json();
    expect(made).toMatchObject({
      scope: 'project_environment',
      project_slug: 'web',
      environment_slug: 'staging',
      notification_type: 'pipeline_run_failed',
      severity: null,
      destination_slugs: ['ops'],
      enabled: true,
    });
    await check('alert-policies');

    await page.getByRole('link', { name: 'Web staging failures' }).click();
    // The edit form opens on the saved values, environment included.
    await page.getByLabel('Environment').waitFor();
    expect(await page.getByLabel('Applies to').inputValue()).toBe('project_environment');
    expect(await page.getByLabel('Environment').inputValue()).toBe('staging');
    expect(await page.getByLabel('Notification type').inputValue()).toBe('pipeline_run_failed');
    expect(await page.getByRole('checkbox', { name: /^Ops/ }).isChecked()).toBe(true);
    await page.getByLabel('Severity').selectOption('error');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator('tr[data-policy="web-staging-failures"]').waitFor();
    const edited = (await api('GET', '/organizations/acme/alert-policies/web-staging-failures')).json();
    expect(edited.severity).toBe('error');
    expect(edited.notification_type).toBe('pipeline_run_failed');

    // The API's refusal is shown from its error wrapper: a destination in use cannot be deleted.
    await open('/o/acme/alerts/destinations', 'tr[data-destination="ops"]');
    await page.getByRole('button', { name: 'Delete Ops' }).click();
    await page.getByRole('button', { name: 'Delete destination' }).click();
    const refusal = page.getByRole('alert');
    await expect
      .poll(() => refusal.textContent())
      .toMatch(/CONFLICT.*used by alert policies web-staging-failures/);
    expect(await page.locator('tr[data-destination="ops"]').count()).toBe(1);
  });

  it('shows a new notification in the open list without a reload, and its delivery attempts', async () => {
    await open('/o/acme/notifications', 'main h1');
    await page.getByTestId('live-status').waitFor();
    await page.evaluate('window.__sameDocument = true');
    const [org] = (await t.rt.deps.store.executeSql(`select id from organizations where slug = 'acme'`))
      .rows as {
      id: string;
    }[];
    await t.rt.deps.db.transaction((tx) =>
      raiseNotification(tx, t.rt.deps, {
        organizationId: org.id,
        type: 'pipeline_run_failed',
        severity: 'error',
        title: 'Pipeline Orders failed in staging',
        summary: 'Run r-1 failed (SOURCE_FAILED).',
        projectSlug: 'web',
        environmentSlug: 'staging',
        subject: { kind: 'pipeline', slug: 'orders' },
        sourceKind: 'pipeline_run',
        sourceAction: 'update',
        sourceRefs: [{ kind: 'pipeline', value: 'orders' }],
        sourceKey: 'browser-alerts-1',
      }),
    );
    const link = page.getByRole('link', { name: 'Pipeline Orders failed in staging' });
    await link.waitFor({ timeout: 30_000 });
    expect(await page.evaluate('window.__sameDocument')).toBe(true);

    // The policy mails it to Ops through the SMTP peer; the attempt is recorded as sent.
    const alert = await smtp.waitFor((m) => m.subject.includes('Pipeline Orders failed in staging'), 30_000);
    expect(alert.envelope.to.sort()).toEqual(['lead@example.com', 'ops@example.com']);
    await link.click();
    await page.getByRole('button', { name: 'Acknowledge' }).waitFor();
    notificationSlug = page.url().split('/').pop()!.split(/[?#]/)[0];
    await page.getByRole('link', { name: 'Open in the delivery attempts view' }).click();
    await page.getByTestId('attempts-scope').waitFor();
    expect(new URL(page.url()).searchParams.get('notification_slugs')).toBe(notificationSlug);
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByTestId('attempts-scope').waitFor();
          return page.locator('tr[data-status="sent"]').count();
        },
        { timeout: 20_000 },
      )
      .toBe(1);

    // The bulk view pages notifications by their filters (in the URL) and lists their attempts.
    await open('/o/acme/alerts/attempts?notification_type=pipeline_run_failed', 'tr[data-attempt]');
    expect(await page.getByLabel('Notification type').inputValue()).toBe('pipeline_run_failed');
    expect(await page.locator('tr[data-status="sent"]').count()).toBe(1);
    await check('delivery-attempts');
    await page.getByLabel('Attempt status').selectOption('failed');
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe('failed');
    await page.getByText('No delivery attempt for these notifications').waitFor();
    await open('/o/acme/alerts/attempts?notification_type=schema_drift_detected', 'main h1');
    await page.getByText('No notification matches these filters').waitFor();
  });

  it('invites a member and revokes the invitation after confirming', async () => {
    await open('/o/acme/settings/invitations', 'table');
    await page.getByLabel('Email').fill('new-hire@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('developer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const row = page.locator('tr', { hasText: 'new-hire@example.com' });
    await row.getByText('pending').waitFor();
    await smtp.waitFor((m) => m.envelope.to.includes('new-hire@example.com'), 20_000);
    await check('settings-invitations');

    // Escape cancels the confirmation; nothing is revoked.
    await page.getByRole('button', { name: 'Revoke the invitation of new-hire@example.com' }).click();
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    expect(await row.getByText('pending').count()).toBe(1);
    await page.getByRole('button', { name: 'Revoke the invitation of new-hire@example.com' }).click();
    await page.getByRole('button', { name: 'Revoke invitation' }).click();
    await row.getByText('revoked').waitFor();
    const list = (await api('GET', '/organizations/acme/invitations?status=revoked')).json();
    expect(list.invitations.map((i: { email: string }) => i.email)).toEqual(['new-hire@example.com']);
    // The status filter is in the URL.
    await page.getByLabel('Status').selectOption('pending');
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe('pending');
    await page.getByText('No invitation matches.').waitFor();
  });

  it('creates and edits a custom role, gives it to a member, and removes the member', async () => {
    await open('/o/acme/settings/roles', 'table');
    await page.getByRole('button', { name: 'New custom role' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('role')).toBe('new');
    await page.getByLabel('Role name').fill('Alert keeper');
    for (const p of ['alerts.read', 'alerts.write', 'notifications.manage'])
      await page.getByRole('checkbox', { name: new RegExp(`^${p.replace('.', '\\.')}`) }).check();
    await check('settings-role-form');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.locator('tr[data-role="alert-keeper"]').waitFor();
    await page.getByRole('button', { name: 'Edit Alert keeper' }).click();
    await page.getByRole('checkbox', { name: /^events\.read/ }).check();
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByRole('button', { name: 'Save role' }).waitFor({ state: 'detached' });
    const role = (await api('GET', '/organizations/acme/roles/alert-keeper')).json();
    expect(role.permissions.sort()).toEqual([
      'alerts.read',
      'alerts.write',
      'events.read',
      'notifications.manage',
    ]);
    await check('settings-roles');

    await open('/o/acme/settings/members', `tr[data-member="${teammate.slug}"]`);
    await page.getByLabel('Role of teammate@example.com', { exact: true }).selectOption('alert-keeper');
    await page.getByRole('button', { name: 'Change role of teammate@example.com' }).click();
    await page.getByRole('button', { name: 'Make alert-keeper' }).click();
    await expect
      .poll(async () => (await api('GET', `/organizations/acme/members/${teammate.slug}`)).json().role)
      .toBe('alert-keeper');
    await check('settings-members');
    await page.getByRole('button', { name: 'Remove teammate@example.com' }).click();
    await page.getByRole('button', { name: 'Remove member' }).click();
    await page.locator(`tr[data-member="${teammate.slug}"]`).waitFor({ state: 'detached' });
    expect((await api('GET', `/organizations/acme/members/${teammate.slug}`)).statusCode).toBe(404);
  });

  it('saves both billing profiles, refusing bad input in place, and keeps them across a reload', async () => {
    await open('/o/acme/settings/billing', 'form');
    const orgForm = page.getByRole('region', { name: 'Organization billing profile' });
    const userForm = page.getByRole('region', { name: 'Your billing profile' });
    await orgForm.getByText('not set yet').waitFor();
    await userForm.getByText('not set yet').waitFor();
    await orgForm.getByLabel('Billing name').fill('Acme GmbH');
    await orgForm.getByLabel('Billing email').fill('invoices@acme.example');
    await orgForm.getByLabel('Address line 1').fill('Hauptstraße 1');
    await orgForm.getByLabel('City').fill('Berlin');
    await orgForm.getByLabel('Postal code').fill('1'.repeat(33));
    await orgForm.getByRole('button', { name: 'Save billing profile' }).click();
    await orgForm.getByText('At most 32 characters').waitFor();
    await orgForm.getByText('Choose a country').last().waitFor();
    expect(await orgForm.getByLabel('Billing name').inputValue()).toBe('Acme GmbH');
    await check('settings-billing-invalid');
    await orgForm.getByLabel('Postal code').fill('10115');
    await orgForm.getByLabel('Country').selectOption('DE');
    await orgForm.getByLabel('Tax or VAT ID (optional)').fill('DE123456789');
    await orgForm.getByRole('button', { name: 'Save billing profile' }).click();
    await orgForm.getByRole('status').waitFor();

    await userForm.getByLabel('Billing name').fill('Owner Person');
    await userForm.getByLabel('Billing email').fill(EMAIL);
    await userForm.getByLabel('Address line 1').fill('1 Main Street');
    await userForm.getByLabel('City').fill('Lyon');
    await userForm.getByLabel('Postal code').fill('69001');
    await userForm.getByLabel('Country').selectOption('FR');
    await userForm.getByRole('button', { name: 'Save billing profile' }).click();
    await userForm.getByRole('status').waitFor();

    await page.reload();
    await orgForm.getByLabel('Billing name').waitFor();
    await expect.poll(() => orgForm.getByLabel('Billing name').inputValue()).toBe('Acme GmbH');
    expect(await orgForm.getByLabel('Country').inputValue()).toBe('DE');
    expect(await orgForm.getByLabel('Tax or VAT ID (optional)').inputValue()).toBe('DE123456789');
    expect(await userForm.getByLabel('City').inputValue()).toBe('Lyon');
    expect(await userForm.getByLabel('Country').inputValue()).toBe('FR');
    const org = (await api('GET', '/organizations/acme/billing-profile')).json();
    expect(org).toMatchObject({
      billing_name: 'Acme GmbH',
      tax_id: 'DE123456789',
      address: { line2: null, region: null, postal_code: '10115' },
      country: 'DE',
    });
    await check('settings-billing');
    // Keyboard: the focused control shows a visible ring.
    await orgForm.getByLabel('Billing name').focus();
    await page.keyboard.press('Tab');
    const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
    expect(outline).not.toBe('none');
  });

  it('finds no serious or critical axe violation on any new screen', () => {
    const serious = Object.entries(a11y).filter(([, v]) => v.length > 0);
    expect(Object.keys(a11y).length).toBeGreaterThanOrEqual(12);
    expect(serious, JSON.stringify(serious, null, 1)).toEqual([]);
  });
});
