import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordsApiPeer, startRecordsApi } from '../../../../../test/peers/records-api';
import { type SmtpPeer, startSmtpPeer } from '../../../../../test/peers/smtp';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import {
  createSinkDatabase,
  deployOrdersPipeline,
  terminal,
  waitUntil,
} from '../../../../../test/support/runs';
import { type RaiseInput, raiseNotification } from './notifications.raise';

// Notifications raised by the worker from real runs and schema imports, their counting, reopen
// and stale-event rules, the list filters, and :acknowledge / :resolve with their events.

const SINK_DB = `sluice_alerts_sink_${process.pid}_${randomBytes(3).toString('hex')}`;
const org = '/organizations/acme';

describe('notifications', () => {
  let t: TestApp;
  let smtp: SmtpPeer;
  let api: RecordsApiPeer;
  let sink: { drop(): Promise<unknown> };
  let owner: string;
  let pe: string;
  let now = new Date('2026-04-01T10:00:00.000Z');
  let runNo = 0;
  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });
  const sql = async (text: string, values?: unknown[]) =>
    (await t.rt.deps.store.executeSql(text, values)).rows;
  const settle = () =>
    waitUntil(
      () =>
        sql(`select count(*)::int as n from pgboss.job
              where name like 'alerts.%' and state in ('created', 'retry', 'active')`),
      (r) => r[0].n === 0,
      20_000,
    );
  const run = async () => {
    const slug = `run-${++runNo}`;
    const res = await call('POST', `${pe}/pipelines/orders-sync:execute`, {
      input: { region: 'eu' },
      run_slug: slug,
    });
    expect(res.statusCode, res.body).toBe(202);
    const done = await waitUntil(
      async () => (await call('GET', `${pe}/runs/${slug}`)).json(),
      terminal,
      30_000,
    );
    await settle();
    return done;
  };
  const setBroken = (broken: boolean) =>
    call('PATCH', `${org}/data-sources/shop-api`, {
      config: { base_url: broken ? `${api.url}/broken` : api.url },
      // Moving where credentials go takes them again (the data source has none).
      credentials: {},
    });
  const list = async (q = '') => (await call('GET', `${org}/notifications${q}`)).json().notifications;
  const raise = async (o: Partial<RaiseInput>) => {
    const orgId = (await sql(`select id from organizations where slug = 'acme'`))[0].id;
    const r = await t.rt.deps.db.transaction((tx) =>
      raiseNotification(tx, t.rt.deps, {
        organizationId: orgId,
        type: 'data_source_test_failed',
        severity: 'warning',
        title: 'Connection test of Shop API failed',
        summary: 'CONNECTION_FAILED',
        projectSlug: null,
        environmentSlug: null,
        subject: { kind: 'data_source', slug: 'shop-api' },
        sourceKind: 'data_source',
        sourceAction: 'test_connection',
        sourceRefs: [{ kind: 'data_source', value: 'shop-api' }],
        sourceKey: 'k',
        ...o,
      }),
    );
    await settle();
    return r;
  };

  beforeAll(async () => {
    sink = await createSinkDatabase(SINK_DB);
    api = await startRecordsApi({ perResponse: 5 });
    smtp = await startSmtpPeer();
    t = await startTestApp({ worker: true, env: { SLUICE_SMTP_URL: smtp.url } });
    t.rt.deps.clock = () => now;
    owner = (await t.bootstrap('acme')).api_key;
    ({ pe } = await deployOrdersPipeline((m, u, b) => call(m, u, b), {
      apiUrl: api.url,
      sinkDatabase: SINK_DB,
      pipeline: 'orders-sync',
    }));
    await call('POST', `${org}/alert-destinations`, {
      name: 'Ops',
      slug: 'ops',
      type: 'email',
      non_secret_config: { recipients: ['ops@example.com'] },
    });
    const p = await call('POST', `${org}/alert-policies`, {
      name: 'Shop',
      scope: 'project',
      project_slug: 'shop',
      destination_slugs: ['ops'],
    });
    expect(p.statusCode, p.body).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await api?.close();
    await smtp?.close();
    await sink?.drop();
  });

  it('a failing pipeline alerts once, escalates after three failures, and recovers once', async () => {
    await setBroken(true);
    expect((await run()).state).toBe('failed');
    let [n] = await list('?notification_type=pipeline_run_failed');
    expect(n).toMatchObject({
      severity: 'error',
      lifecycle_state: 'open',
      project_slug: 'shop',
      environment_slug: 'staging',
      source_kind: 'pipeline_run',
      source_action: 'update',
      occurrence_count: 1,
      source_refs: expect.arrayContaining([{ kind: 'pipeline', value: 'orders-sync' }]),
    });
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0].subject).toBe('[Sluice] error Pipeline orders-sync failed in staging');

    now = new Date(now.getTime() + 60_000);
    await run();
    expect(smtp.messages).toHaveLength(1);
    [n] = await list('?notification_type=pipeline_run_failed');
    expect(n).toMatchObject({ occurrence_count: 2, severity: 'error' });

    now = new Date(now.getTime() + 60_000);
    await run();
    [n] = await list('?notification_type=pipeline_run_failed');
    expect(n).toMatchObject({ occurrence_count: 3, severity: 'critical' });
    expect(smtp.messages.map((m) => m.subject)).toEqual([
      '[Sluice] error Pipeline orders-sync failed in staging',
      '[Sluice] critical Pipeline orders-sync failed in staging',
    ]);

    await setBroken(false);
    now = new Date(now.getTime() + 60_000);
    expect((await run()).state).toBe('succeeded');
    [n] = await list('?notification_type=pipeline_run_failed');
    expect(n.lifecycle_state).toBe('resolved');
    const [rec] = await list('?notification_type=pipeline_run_recovered');
    expect(rec).toMatchObject({ severity: 'info', lifecycle_state: 'resolved', occurrence_count: 1 });
    expect(smtp.messages).toHaveLength(3);
    expect(smtp.messages[2].subject).toBe('[Sluice] info Pipeline orders-sync recovered in staging');
    // Another success recovers nothing more.
    await run();
    expect(smtp.messages).toHaveLength(3);
    const events = (await call('GET', `${org}/events?entity_type=notification&action=resolve`)).json().events;
    expect(events.some((e: any) => e.entity_slug === n.slug && e.actor_type === 'system')).toBe(true);
  }, 120_000);

  it('a failed schema import raises schema_import_failed; an interactive test raises nothing', async () => {
    const patch = await call('PATCH', `${org}/data-sources/shop-api`, {
      config: { openapi_url: `${api.url}/missing.json` },
      credentials: {},
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const started = await call('POST', `${org}/data-sources/shop-api/schema-import`);
    expect(started.statusCode, started.body).toBe(202);
    await waitUntil(
      async () => (await call('GET', `${org}/data-sources/shop-api`)).json(),
      (d) => d.schema_status === 'failed',
    );
    await settle();
    const [n] = await list('?notification_type=schema_import_failed');
    expect(n).toMatchObject({
      severity: 'warning',
      lifecycle_state: 'open',
      project_slug: null,
      source_kind: 'data_source',
      source_action: 'refresh',
      source_refs: [{ kind: 'data_source', value: 'shop-api' }],
    });
    await call('PATCH', `${org}/data-sources/shop-api`, {
      config: { base_url: 'http://127.0.0.1:9' },
      credentials: {},
    });
    const tested = await call('POST', `${org}/data-sources/shop-api/test-connection`);
    expect(tested.json().ok).toBe(false);
    expect(await list('?notification_type=data_source_test_failed')).toEqual([]);
    await setBroken(false);
  });

  it('counts each source event once, reopens after resolution, keeps a stale event resolved', async () => {
    const first = await raise({ sourceKey: 'e1' });
    expect(first.outcome).toBe('opened');
    expect((await raise({ sourceKey: 'e1' })).outcome).toBe('duplicate');
    const r = await call('POST', `${org}/notifications/${first.slug}:resolve`);
    expect(r.json()).toMatchObject({ lifecycle_state: 'resolved', occurrence_count: 1 });
    // Happened before the resolution: counted, still resolved.
    const stale = await raise({ sourceKey: 'e0', occurredAt: new Date(now.getTime() - 1000) });
    expect(stale.outcome).toBe('stale');
    let got = (await call('GET', `${org}/notifications/${first.slug}`)).json();
    expect(got).toMatchObject({ lifecycle_state: 'resolved', occurrence_count: 2, reopen_count: 0 });
    now = new Date(now.getTime() + 1000);
    expect((await raise({ sourceKey: 'e2' })).outcome).toBe('reopened');
    got = (await call('GET', `${org}/notifications/${first.slug}`)).json();
    expect(got).toMatchObject({
      lifecycle_state: 'open',
      occurrence_count: 3,
      reopen_count: 1,
      resolved_at: null,
    });
  });

  it('acknowledges and resolves with events; a resolved one cannot be acknowledged', async () => {
    const [n] = await list('?notification_type=data_source_test_failed');
    const ack = await call('POST', `${org}/notifications/${n.slug}:acknowledge`);
    expect(ack.statusCode, ack.body).toBe(200);
    expect(ack.json().acknowledged_at).toBeTruthy();
    await call('POST', `${org}/notifications/${n.slug}:resolve`);
    const again = await call('POST', `${org}/notifications/${n.slug}:acknowledge`);
    expect(again.statusCode).toBe(409);
    const events = (await call('GET', `${org}/events?entity_type=notification&entity_slug=${n.slug}`)).json()
      .events;
    expect(events.map((e: any) => e.action).sort()).toEqual(
      expect.arrayContaining(['acknowledge', 'resolve']),
    );
    expect((await call('POST', `${org}/notifications/nope:resolve`)).statusCode).toBe(404);
  });

  it('lists with every filter and sorts by last_seen_at', async () => {
    const all = await list('?limit=100');
    expect(all.length).toBeGreaterThanOrEqual(3);
    const seen = all.map((n: any) => n.last_seen_at);
    expect([...seen].sort().reverse()).toEqual(seen);
    const asc = await list('?limit=100&order=asc');
    expect(asc.map((n: any) => n.slug)).toEqual([...all].reverse().map((n: any) => n.slug));
    const cases: [string, (n: any) => boolean][] = [
      ['project_slug=shop', (n) => n.project_slug === 'shop'],
      ['environment_slug=staging', (n) => n.environment_slug === 'staging'],
      ['lifecycle_state=resolved', (n) => n.lifecycle_state === 'resolved'],
      ['notification_type=pipeline_run_recovered', (n) => n.notification_type === 'pipeline_run_recovered'],
      ['severity=critical', (n) => n.severity === 'critical'],
      ['severity=info&lifecycle_state=open', (n) => n.severity === 'info' && n.lifecycle_state === 'open'],
    ];
    for (const [q, pred] of cases) {
      const got = await list(`?limit=100&${q}`);
      expect(
        got.map((n: any) => n.slug),
        q,
      ).toEqual(all.filter(pred).map((n: any) => n.slug));
    }
    const page = (await call('GET', `${org}/notifications?limit=1`)).json();
    expect(page.has_more).toBe(true);
    const next = (await call('GET', `${org}/notifications?limit=1&cursor=${page.next_cursor}`)).json();
    expect(next.notifications[0].slug).toBe(all[1].slug);
    expect((await call('GET', `${org}/notifications?severity=loud`)).statusCode).toBe(400);
    expect((await call('GET', `${org}/notifications?sort_by=created_at`)).statusCode).toBe(400);
  });
});
