import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpPeer, startSmtpPeer } from '../../../../../test/peers/smtp';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { waitUntil } from '../../../../../test/support/runs';

// Destinations and policies through the API: validation, the scope rules (docs/alerting.md),
// destinations that must exist, delete refused while in use, source metadata, and :test.

const org = '/organizations/acme';

describe('alert destinations and policies', () => {
  let t: TestApp;
  let smtp: SmtpPeer;
  let owner: string;
  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });

  beforeAll(async () => {
    smtp = await startSmtpPeer();
    t = await startTestApp({ worker: true, env: { SLUICE_SMTP_URL: smtp.url } });
    owner = (await t.bootstrap('acme')).api_key;
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('creates, reads, lists, updates destinations and validates recipients', async () => {
    const created = await call('POST', `${org}/alert-destinations`, {
      name: 'Ops mail',
      type: 'email',
      non_secret_config: { recipients: ['ops@example.com', 'oncall@example.com'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({
      slug: 'ops-mail',
      type: 'email',
      enabled: true,
      non_secret_config: { recipients: ['ops@example.com', 'oncall@example.com'] },
    });
    for (const bad of [
      { recipients: [] },
      { recipients: ['not-an-email'] },
      { recipients: ['a@example.com'], password: 'x' },
      {},
    ]) {
      const res = await call('POST', `${org}/alert-destinations`, {
        name: 'Bad',
        type: 'email',
        non_secret_config: bad,
      });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
    }
    const patched = await call('PATCH', `${org}/alert-destinations/ops-mail`, { enabled: false });
    expect(patched.json().enabled).toBe(false);
    const list = await call('GET', `${org}/alert-destinations`);
    expect(list.json()).toMatchObject({ alert_destinations: [{ slug: 'ops-mail' }], has_more: false });
    expect((await call('GET', `${org}/alert-destinations/nope`)).statusCode).toBe(404);
  });

  it('enforces the three scope rules on every combination (400 with validation_errors)', async () => {
    await call('PATCH', `${org}/alert-destinations/ops-mail`, { enabled: true });
    const combos: [string, string | null, string | null, boolean][] = [];
    for (const scope of ['organization', 'project', 'project_environment'])
      for (const p of [null, 'shop'])
        for (const e of [null, 'prod']) {
          const ok = scope === 'organization' ? !p && !e : scope === 'project' ? !!p && !e : !!p && !!e;
          combos.push([scope, p, e, ok]);
        }
    let i = 0;
    for (const [scope, p, e, ok] of combos) {
      const res = await call('POST', `${org}/alert-policies`, {
        name: `Scope ${i}`,
        slug: `scope-${i++}`,
        scope,
        ...(p ? { project_slug: p } : {}),
        ...(e ? { environment_slug: e } : {}),
        destination_slugs: ['ops-mail'],
      });
      const what = `${scope} project=${p} env=${e}: ${res.body}`;
      if (ok) {
        expect(res.statusCode, what).toBe(201);
        expect(res.json()).toMatchObject({
          scope,
          project_slug: p,
          environment_slug: e,
          destination_slugs: ['ops-mail'],
        });
      } else {
        expect(res.statusCode, what).toBe(400);
        expect(res.json().error.code).toBe('VALIDATION_FAILED');
        const paths = res.json().error.validation_errors.map((v: any) => v.path);
        expect(paths.length, what).toBeGreaterThan(0);
        expect(
          paths.every((x: string) => x === 'project_slug' || x === 'environment_slug'),
          what,
        ).toBe(true);
      }
    }
    // Explicit nulls are "not given"; the rules also hold on PATCH.
    const nulls = await call('POST', `${org}/alert-policies`, {
      name: 'Nulls',
      scope: 'organization',
      project_slug: null,
      environment_slug: null,
      destination_slugs: ['ops-mail'],
    });
    expect(nulls.statusCode, nulls.body).toBe(201);
    const patch = await call('PATCH', `${org}/alert-policies/nulls`, { scope: 'project' });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().error.validation_errors).toEqual([
      expect.objectContaining({ path: 'project_slug', code: 'scope_rule' }),
    ]);
    const unknownScope = await call('POST', `${org}/alert-policies`, {
      name: 'U',
      scope: 'unknown',
      destination_slugs: ['ops-mail'],
    });
    expect(unknownScope.statusCode).toBe(400);
  });

  it('requires destinations of this organization and refuses deleting one in use', async () => {
    const missing = await call('POST', `${org}/alert-policies`, {
      name: 'Missing',
      scope: 'organization',
      destination_slugs: ['ops-mail', 'nowhere'],
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.validation_errors).toEqual([
      expect.objectContaining({ path: 'destination_slugs.1', code: 'not_found' }),
    ]);
    const empty = await call('POST', `${org}/alert-policies`, {
      name: 'Empty',
      scope: 'organization',
      destination_slugs: [],
    });
    expect(empty.statusCode).toBe(400);
    const del = await call('DELETE', `${org}/alert-destinations/ops-mail`);
    expect(del.statusCode).toBe(409);
    expect(del.json().error.code).toBe('CONFLICT');
    // Once no policy uses it, it goes.
    await call('POST', `${org}/alert-destinations`, {
      name: 'Spare',
      type: 'email',
      non_secret_config: { recipients: ['spare@example.com'] },
    });
    const policies = (await call('GET', `${org}/alert-policies?limit=100`)).json().alert_policies;
    for (const p of policies) {
      const res = await call('PATCH', `${org}/alert-policies/${p.slug}`, { destination_slugs: ['spare'] });
      expect(res.statusCode, res.body).toBe(200);
    }
    expect((await call('DELETE', `${org}/alert-destinations/ops-mail`)).statusCode).toBe(204);
    expect((await call('DELETE', `${org}/alert-policies/nulls`)).statusCode).toBe(204);
    expect((await call('GET', `${org}/alert-policies/nulls`)).statusCode).toBe(404);
  });

  it('keeps every filter of a policy and answers source metadata from real resources', async () => {
    const res = await call('POST', `${org}/alert-policies`, {
      name: 'Filters',
      scope: 'organization',
      notification_type: 'pipeline_run_failed',
      severity: 'critical',
      lifecycle_state: 'open',
      source_kind: 'pipeline_run',
      source_action: 'update',
      source_ref: 'orders-sync',
      destination_slugs: ['spare'],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      notification_type: 'pipeline_run_failed',
      severity: 'critical',
      lifecycle_state: 'open',
      source_kind: 'pipeline_run',
      source_action: 'update',
      source_ref: 'orders-sync',
    });
    const bad = await call('POST', `${org}/alert-policies`, {
      name: 'Bad',
      scope: 'organization',
      severity: 'loud',
      destination_slugs: ['spare'],
    });
    expect(bad.statusCode).toBe(400);
    const meta = (await call('GET', `${org}/alert-policies/source-metadata`)).json();
    expect(meta.sources).toContainEqual({ source_kind: 'pipeline_run', source_actions: ['update'] });
    expect(meta.source_refs).toContainEqual({ value: 'spare', label: 'Spare (alert destination)' });
  });

  it(':test delivers one real message, creates no records, and needs SMTP', async () => {
    const firstAt = Date.now();
    const res = await call('POST', `${org}/alert-destinations/spare:test`);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({
      status: 'accepted',
      destination_slug: 'spare',
      destination_type: 'email',
      recipient_count: 1,
      diagnostics_persisted: false,
      enqueued_jobs: [{ kind: 'alert_destination_test', queue: 'alerts.destination_test', state: 'created' }],
    });
    const mail = await smtp.waitFor((m) => m.subject.startsWith('[Sluice test]'));
    expect(mail.envelope.to).toEqual(['spare@example.com']);
    const rows = await t.rt.deps.store.executeSql(
      'select (select count(*)::int from notifications) as n, (select count(*)::int from alert_delivery_attempts) as a',
    );
    expect(rows.rows[0]).toEqual({ n: 0, a: 0 });
    expect(smtp.messages.filter((m) => m.subject.startsWith('[Sluice test]'))).toHaveLength(1);
    // A second click in the same one-minute slot is swallowed, and says so (pg-boss throttles
    // by fixed slots, so a click just after the slot turned is a new test).
    const twice = await call('POST', `${org}/alert-destinations/spare:test`);
    expect(twice.statusCode).toBe(202);
    // Both clicks within one minute on this clock: swallowed. Otherwise the slot may have turned
    // before the first job was enqueued or between the two, and the state says which.
    const sameSlot = Math.floor(firstAt / 60_000) === Math.floor(Date.now() / 60_000);
    const state = twice.json().enqueued_jobs[0].state;
    expect(sameSlot ? ['skipped_duplicate'] : ['skipped_duplicate', 'created']).toContain(state);
    const secondSent = state === 'created';
    if (secondSent) await smtp.waitFor((m) => m !== mail && m.subject.startsWith('[Sluice test]'));

    const bare = await startTestApp();
    try {
      const key = (await bare.bootstrap('acme')).api_key;
      await bare.call('POST', `${org}/alert-destinations`, {
        token: key,
        body: { name: 'D', type: 'email', non_secret_config: { recipients: ['d@example.com'] } },
      });
      const no = await bare.call('POST', `${org}/alert-destinations/d:test`, { token: key });
      expect(no.statusCode).toBe(422);
      expect(no.json().error.code).toBe('EMAIL_NOT_CONFIGURED');
      const jobs = await bare.rt.deps.store.executeSql(
        `select count(*)::int as n from pgboss.job where name = 'alerts.destination_test'`,
      );
      expect(jobs.rows[0].n).toBe(0);
    } finally {
      await bare.close();
    }
    // One message per test job created, and nothing from the app without SMTP.
    await waitUntil(
      async () => smtp.messages.length,
      (n) => n === (secondSent ? 2 : 1),
      2000,
    );
  });
});
