import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dumpDatabase } from '../../../../../test/acceptance/support';
import { type SmtpPeer, startSmtpPeer } from '../../../../../test/peers/smtp';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { waitUntil } from '../../../../../test/support/runs';
import { type RaiseInput, raiseNotification } from '../notifications/notifications.raise';

// Delivery over a real SMTP peer: matching and the destination union, the send rules and
// throttles on an injected clock, one attempt row per try, transient vs permanent failures,
// partial refusal, alert_delivery_failed routing, threading, and the canary.

const org = '/organizations/acme';
const PASSWORD = `CanarySmtp${randomBytes(8).toString('hex')}`;

describe('alert delivery', () => {
  let t: TestApp;
  let smtp: SmtpPeer;
  let owner: string;
  let now = new Date('2026-03-02T08:00:00.000Z');
  let seq = 0;
  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });
  const advance = (ms: number) => {
    now = new Date(now.getTime() + ms);
  };
  const sql = async (text: string, values?: unknown[]) =>
    (await t.rt.deps.store.executeSql(text, values)).rows;
  /** Every alert job ran (pg-boss runs them in the background; their outcome is what we check). */
  const settle = () =>
    waitUntil(
      () =>
        sql(`select count(*)::int as n from pgboss.job
              where name like 'alerts.%' and state in ('created', 'retry', 'active')`),
      (r) => r[0].n === 0,
      20_000,
    );
  const raise = async (o: Partial<RaiseInput> = {}) => {
    const orgId = (await sql(`select id from organizations where slug = 'acme'`))[0].id;
    const input: RaiseInput = {
      organizationId: orgId,
      type: 'pipeline_run_failed',
      severity: 'error',
      title: 'Pipeline Orders failed in prod',
      summary: 'Run r failed (SOURCE_FAILED).',
      projectSlug: 'shop',
      environmentSlug: 'prod',
      subject: { kind: 'pipeline', slug: 'orders-sync' },
      sourceKind: 'pipeline_run',
      sourceAction: 'update',
      sourceRefs: [{ kind: 'pipeline', value: 'orders-sync' }],
      sourceKey: `run:${++seq}`,
      escalateAfter: 3,
      ...o,
    };
    const r = await t.rt.deps.db.transaction((tx) => raiseNotification(tx, t.rt.deps, input));
    await settle();
    return r;
  };
  // Oldest first, by try number where the injected clock gave two tries the same instant.
  const attempts = async (slug: string) =>
    (await call('GET', `/organizations/acme/notifications/${slug}/delivery-attempts?order=asc`))
      .json()
      .alert_delivery_attempts.sort((x: any, y: any) => x.provider_attempt - y.provider_attempt);
  const dest = (slug: string, recipients: string[]) =>
    call('POST', `${org}/alert-destinations`, {
      name: slug,
      slug,
      type: 'email',
      non_secret_config: { recipients },
    });
  const policy = (body: Record<string, unknown>) => call('POST', `${org}/alert-policies`, body);

  beforeAll(async () => {
    smtp = await startSmtpPeer({ password: PASSWORD });
    t = await startTestApp({
      worker: true,
      env: { SLUICE_SMTP_URL: smtp.url, SLUICE_ALERT_RETRY_DELAYS_SECONDS: '0,0,0,0' },
    });
    t.rt.deps.clock = () => now;
    owner = (await t.bootstrap('acme')).api_key;
    await dest('ops', ['ops@example.com']);
    await dest('team', ['team@example.com', 'lead@example.com']);
    await dest('other', ['other@example.com']);
    // Two policies reach `ops`: it still gets one message per decision.
    expect(
      (
        await policy({
          name: 'All failures',
          scope: 'organization',
          notification_type: 'pipeline_run_failed',
          destination_slugs: ['ops'],
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await policy({
          name: 'Shop prod',
          scope: 'project_environment',
          project_slug: 'shop',
          environment_slug: 'prod',
          destination_slugs: ['ops', 'team'],
        })
      ).statusCode,
    ).toBe(201);
    // Delivery failures go to every destination but the failing one.
    await policy({
      name: 'Delivery',
      scope: 'organization',
      notification_type: 'alert_delivery_failed',
      destination_slugs: ['ops', 'team', 'other'],
    });
  });
  beforeEach(() => smtp.clear());
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('mails each matching destination once, holds repeats, escalates on the third failure', async () => {
    const first = await raise();
    expect(first.outcome).toBe('opened');
    expect(smtp.messages.map((m) => m.envelope.to.sort().join(',')).sort()).toEqual([
      'lead@example.com,team@example.com',
      'ops@example.com',
    ]);
    const mail = smtp.messages[0];
    expect(mail.subject).toBe('[Sluice] error Pipeline Orders failed in prod');
    expect(mail.text).toContain(`/o/acme/notifications/${first.slug}`);
    expect(mail.raw).toMatch(/Content-Type: text\/html/i);
    expect(mail.raw).toMatch(new RegExp(`References: <${first.slug}\\.notification@`, 'i'));
    expect(mail.raw).toMatch(new RegExp(`In-Reply-To: <${first.slug}\\.notification@`, 'i'));
    const sent = await attempts(first.slug);
    expect(sent).toHaveLength(2);
    expect(sent.every((a: any) => a.status === 'sent' && a.provider_attempt === 1)).toBe(true);
    expect(sent.map((a: any) => a.alert_policy_slug).sort()).toEqual(['shop-prod', 'shop-prod']);
    expect(mail.raw).toMatch(/Message-ID: <att-[a-z0-9]+\.attempt@/i);

    advance(3600_000);
    smtp.clear();
    expect((await raise()).outcome).toBe('counted');
    expect(smtp.messages).toHaveLength(0);
    const n2 = (await call('GET', `${org}/notifications/${first.slug}`)).json();
    expect(n2).toMatchObject({ occurrence_count: 2, severity: 'error', lifecycle_state: 'open' });

    advance(60_000);
    expect((await raise()).outcome).toBe('escalated');
    expect(smtp.messages).toHaveLength(2);
    expect(smtp.messages[0].subject).toBe('[Sluice] critical Pipeline Orders failed in prod');

    // After the repeat window an occurrence mails again; acknowledged, nothing does.
    smtp.clear();
    advance(5 * 3600_000);
    await raise();
    expect(smtp.messages).toHaveLength(2);
    const ack = await call('POST', `${org}/notifications/${first.slug}:acknowledge`);
    expect(ack.json().lifecycle_state).toBe('acknowledged');
    smtp.clear();
    advance(5 * 3600_000);
    await raise();
    expect(smtp.messages).toHaveLength(0);
    await call('POST', `${org}/notifications/${first.slug}:resolve`);
  });

  it('retries a 4xx as a new attempt row with provider_attempt 2', async () => {
    smtp.failNext(1, 451);
    const r = await raise({
      subject: { kind: 'pipeline', slug: 'p-4xx' },
      projectSlug: 'other',
      environmentSlug: null,
    });
    const rows = await attempts(r.slug);
    expect(rows.map((a: any) => [a.provider_attempt, a.status])).toEqual([
      [1, 'failed'],
      [2, 'sent'],
    ]);
    expect(rows[0]).toMatchObject({
      error_category: 'EMAIL_DELIVERY_FAILED',
      provider_response_metadata: {
        transport: 'smtp',
        smtp_response_code: 451,
        failure_class: 'transient',
        smtp_command: 'DATA',
      },
    });
    expect(rows[0].provider_response_metadata.next_retry_at).toBeTruthy();
    expect(smtp.messages).toHaveLength(1);
  });

  it('fails a 5xx for good and raises alert_delivery_failed, never to the failing destination', async () => {
    smtp.failNext(1, 550);
    const r = await raise({
      subject: { kind: 'pipeline', slug: 'p-5xx' },
      projectSlug: 'other',
      environmentSlug: null,
    });
    const rows = await attempts(r.slug);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'failed', provider_attempt: 1, destination_slug: 'ops' });
    expect(rows[0].provider_response_metadata).toMatchObject({
      smtp_response_code: 550,
      failure_class: 'permanent',
    });
    const failed = (await call('GET', `${org}/notifications?notification_type=alert_delivery_failed`)).json();
    expect(failed.notifications).toHaveLength(1);
    expect(failed.notifications[0]).toMatchObject({
      severity: 'error',
      lifecycle_state: 'open',
      project_slug: null,
      source_refs: expect.arrayContaining([{ kind: 'destination', value: 'ops' }]),
    });
    const notices = smtp.messages.filter((m) => m.subject.includes('Alert delivery to ops failed'));
    expect(notices.flatMap((m) => m.envelope.to).sort()).toEqual([
      'lead@example.com',
      'other@example.com',
      'team@example.com',
    ]);
    // The next good delivery to ops resolves it.
    await raise({ subject: { kind: 'pipeline', slug: 'p-ok' }, projectSlug: 'other', environmentSlug: null });
    const after = (await call('GET', `${org}/notifications/${failed.notifications[0].slug}`)).json();
    expect(after.lifecycle_state).toBe('resolved');
  });

  it('treats 535 as permanent (authentication) and 421 as transient', async () => {
    smtp.failAuthNext(1);
    const a = await raise({
      subject: { kind: 'pipeline', slug: 'p-auth' },
      projectSlug: 'other',
      environmentSlug: null,
    });
    const ra = await attempts(a.slug);
    expect(ra).toHaveLength(1);
    expect(ra[0].provider_response_metadata).toMatchObject({
      smtp_response_code: 535,
      failure_class: 'authentication',
    });
    expect(ra[0].error_message).toBe('the SMTP server refused the credentials (535 on AUTH)');
    smtp.failNext(1, 421);
    const b = await raise({
      subject: { kind: 'pipeline', slug: 'p-421' },
      projectSlug: 'other',
      environmentSlug: null,
    });
    expect((await attempts(b.slug)).map((x: any) => x.status)).toEqual(['failed', 'sent']);
  });

  it('counts a partial recipient refusal as sent and lists the refused addresses', async () => {
    smtp.refuseRecipients(['lead@example.com']);
    const r = await raise({ subject: { kind: 'pipeline', slug: 'p-partial' } });
    const rows = await attempts(r.slug);
    const team = rows.find((x: any) => x.destination_slug === 'team');
    expect(team).toMatchObject({ status: 'sent', provider_attempt: 1, error_category: null });
    expect(team.provider_response_metadata).toMatchObject({
      accepted_count: 1,
      rejected_count: 1,
      rejected_recipients: ['lead@example.com'],
    });
    expect(rows).toHaveLength(2);
  });

  it('caps messages per destination per hour and says how many were held back', async () => {
    t.rt.deps.config.alerts.destinationHourlyCap = 2;
    advance(3600_000);
    try {
      for (const s of ['cap-1', 'cap-2', 'cap-3']) {
        await raise({ subject: { kind: 'pipeline', slug: s }, projectSlug: 'other', environmentSlug: null });
      }
      expect(smtp.messages).toHaveLength(2);
      advance(3600_000);
      await raise({
        subject: { kind: 'pipeline', slug: 'cap-4' },
        projectSlug: 'other',
        environmentSlug: null,
      });
      expect(smtp.messages).toHaveLength(3);
      expect(smtp.messages[2].text).toContain('1 earlier message(s) to this destination were held back');
    } finally {
      t.rt.deps.config.alerts.destinationHourlyCap = 30;
    }
  });

  it('reads recent attempts in bulk, bounded as docs/alerting.md says', async () => {
    const list = (await call('GET', `${org}/notifications?limit=100`)).json().notifications;
    const slugs = list.map((n: any) => n.slug).slice(0, 3);
    const res = await call(
      'GET',
      `${org}/alert-delivery-attempts?notification_slugs=${slugs.join(',')}&limit_per_notification=1`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ has_more: false, next_cursor: null, prev_cursor: null });
    const per = new Map<string, number>();
    for (const a of body.alert_delivery_attempts)
      per.set(a.notification_record_slug, (per.get(a.notification_record_slug) ?? 0) + 1);
    expect([...per.values()].every((n) => n === 1)).toBe(true);
    const many = Array.from({ length: 51 }, (_, i) => `n-${i}`).join(',');
    expect((await call('GET', `${org}/alert-delivery-attempts?notification_slugs=${many}`)).statusCode).toBe(
      400,
    );
    expect(
      (await call('GET', `${org}/alert-delivery-attempts?notification_slugs=a&limit_per_notification=11`))
        .statusCode,
    ).toBe(400);
    expect((await call('GET', `${org}/alert-delivery-attempts`)).statusCode).toBe(400);
  });

  it('never shows SMTP credentials or message bodies in responses, records, events or logs', async () => {
    smtp.clear();
    smtp.failAuthNext(1);
    await raise({
      subject: { kind: 'pipeline', slug: 'canary' },
      projectSlug: 'other',
      environmentSlug: null,
    });
    await raise({
      subject: { kind: 'pipeline', slug: 'canary-2' },
      projectSlug: 'other',
      environmentSlug: null,
    });
    const body = smtp.messages[0].text;
    const bodyLine = body.split('\n').find((l) => l.startsWith('Open in Sluice:'))!;
    expect(bodyLine).toBeTruthy();
    const db = await dumpDatabase(t);
    const responses = [
      (await call('GET', `${org}/notifications?limit=100`)).body,
      (await call('GET', `${org}/events?limit=100`)).body,
    ].join('\n');
    for (const [where, text] of [
      ['database', db],
      ['logs', t.logs()],
      ['responses', responses],
    ] as const) {
      expect(text.includes(PASSWORD), where).toBe(false);
      expect(text.includes(bodyLine), where).toBe(false);
      expect(text.includes(smtp.url), where).toBe(false);
    }
  });
});
