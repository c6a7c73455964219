import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { type Call, dumpStore } from '../../../../../test/support/runs';
import { PE, rows, setupTriggerPipelines } from '../../../../../test/support/triggers';
import { BURST_THRESHOLD } from './refusal-burst';
import { signedHeaders } from './webhook-signature';
import { receiveDelivery } from './webhooks.service';

// Signed deliveries (Standard Webhooks, docs/triggers.md#webhooks): every answer, and no run from
// any refused delivery; secrets shown once and rotated with a grace period; values never stored.

const CANARY = `Region${randomBytes(8).toString('hex')}`;

describe('webhook triggers', () => {
  let t: TestApp;
  let call: Call;
  let secret: string;
  const base = `${PE}/pipelines/hooked/triggers`;
  const url = (slug: string, id: string) => `/webhooks/pipeline-triggers/${slug}/deliveries/${id}`;
  const now = () => Math.floor(Date.now() / 1000);
  const deliver = (
    slug: string,
    id: string,
    body: string,
    o: { key?: string; ts?: number; headerId?: string; headers?: Record<string, string> } = {},
  ) => {
    const h = signedHeaders(o.key ?? secret, o.headerId ?? id, o.ts ?? now(), body);
    return t.call('POST', url(slug, id), {
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'sender/1.0', ...h, ...o.headers },
    });
  };
  const runCount = async () => Number((await rows(t, 'select count(*)::int as n from pipeline_runs'))[0].n);
  const refusals = async () =>
    rows(
      t,
      `select metadata, actor_type from events where event_class = 'security_audit' and metadata->>'outcome' = 'refused' order by occurred_at`,
    );
  let hookSlug: string;

  beforeAll(async () => {
    t = await startTestApp();
    ({ call } = await setupTriggerPipelines(t));
    const res = await call('POST', base, {
      name: 'Orders hook',
      kind: 'webhook',
      webhook: { input_mapping: { region: '/order/region' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    secret = res.json().secret;
    hookSlug = res.json().slug;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('shows the secret once and lists it by prefix only; generated slugs carry a suffix', async () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(hookSlug).toMatch(/^orders-hook-[a-z0-9]{6}$/);
    const got = (await call('GET', `${base}/${hookSlug}`)).json();
    expect(JSON.stringify(got)).not.toContain(secret.slice(6));
    expect(got.webhook.secrets).toEqual([
      {
        id: expect.any(String),
        prefix: secret.slice(0, 12),
        created_at: expect.any(String),
        expires_at: null,
        last_verified_at: null,
      },
    ]);
    expect(got.webhook.delivery_path).toBe(
      `/webhooks/pipeline-triggers/${hookSlug}/deliveries/{delivery_id}`,
    );
    expect(got.next_fire_times).toEqual([]);
    // A client slug taken by a webhook elsewhere is a 409.
    const dup = await call('POST', `${PE}/pipelines/nightly/triggers`, {
      name: 'x',
      slug: hookSlug,
      kind: 'webhook',
      webhook: {},
    });
    expect(dup.statusCode).toBe(409);
  });

  it('accepts a valid delivery (202), replays the same body (200, same run), refuses another body (409)', async () => {
    const body = JSON.stringify({ order: { id: 7, region: CANARY } });
    const first = await deliver(hookSlug, 'evt_001', body);
    expect(first.statusCode, first.body).toBe(202);
    const run = first.json().run;
    expect(first.json()).toEqual({
      delivery_id: 'evt_001',
      run: { slug: expect.any(String), state: 'queued', trigger: 'webhook', trigger_slug: hookSlug },
    });
    const again = await deliver(hookSlug, 'evt_001', body);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().run.slug).toBe(run.slug);
    const other = await deliver(hookSlug, 'evt_001', JSON.stringify({ order: { id: 8, region: 'x' } }));
    expect(other.statusCode).toBe(409);
    expect(other.json().error.code).toBe('CONFLICT');

    const r = (await call('GET', `${PE}/runs/${run.slug}`)).json();
    expect(r).toMatchObject({ trigger: 'webhook', trigger_slug: hookSlug, input_keys: ['region'] });
    const byFilter = (await call('GET', `${PE}/runs?trigger=webhook&trigger_slug=${hookSlug}`)).json().runs;
    expect(byFilter.map((x: any) => x.slug)).toEqual([run.slug]);
    const dels = (await call('GET', `${base}/${hookSlug}/deliveries`)).json().deliveries;
    expect(dels).toEqual([
      {
        delivery_id: 'evt_001',
        received_at: expect.any(String),
        body_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        input_keys: ['region'],
        outcome: 'started',
        run_slug: run.slug,
      },
    ]);
    const secrets = (await call('GET', `${base}/${hookSlug}`)).json().webhook.secrets;
    expect(secrets[0].last_verified_at).toEqual(expect.any(String));
    // The mapped value went into the sealed run input only.
    const dump = await dumpStore((text) => t.rt.deps.store.executeSql(text));
    expect(dump.includes(CANARY)).toBe(false);
  });

  it('pages deliveries with cursors that hold no row id, and refuses a cursor of the old form precisely', async () => {
    const second = await deliver(hookSlug, 'Evt:002.odd_Chars', JSON.stringify({ order: { region: 'x' } }));
    expect(second.statusCode, second.body).toBe(202);
    const list = `${base}/${hookSlug}/deliveries`;
    const first = (await call('GET', `${list}?limit=1`)).json();
    expect(first.has_more).toBe(true);
    const [cursorTime, cursorId] = first.next_cursor.split('_');
    expect(cursorTime).toBe(first.deliveries[0].received_at);
    expect(cursorId).toMatch(/^[0-9a-f]{16}$/);
    const ids = (await rows(t, 'select id::text as id from webhook_deliveries')).map((r) =>
      String(r.id).replaceAll('-', ''),
    );
    for (const id of ids) expect(first.next_cursor).not.toContain(id.slice(0, 16));
    // Delivery ids are time-ordered like a run's (docs/operations.md#row-ids): version 7.
    for (const id of ids) expect(id[12]).toBe('7');
    const next = (
      await call('GET', `${list}?limit=1&cursor=${encodeURIComponent(first.next_cursor)}`)
    ).json();
    expect([first.deliveries[0].delivery_id, next.deliveries[0].delivery_id].sort()).toEqual([
      'Evt:002.odd_Chars',
      'evt_001',
    ]);
    expect(next.has_more).toBe(false);

    // Cursors handed out before this form named the row id (32 hex characters).
    const old = await call('GET', `${list}?limit=1&cursor=${encodeURIComponent(`${cursorTime}_${ids[0]}`)}`);
    expect(old.statusCode).toBe(400);
    expect(old.json().error).toMatchObject({
      code: 'VALIDATION_FAILED',
      validation_errors: [
        { path: 'cursor', code: 'stale_cursor', message: expect.stringContaining('without a cursor') },
      ],
    });
  });

  it('answers 401 to stale, future, wrong id, wrong secret, missing headers, unknown trigger; no run, id not used up', async () => {
    const before = await runCount();
    const body = JSON.stringify({ order: { region: 'eu' } });
    const cases: [string, Promise<{ statusCode: number; json(): any }>][] = [
      ['stale', deliver(hookSlug, 'evt_002', body, { ts: now() - 301 })],
      // Past the 300 s window by more than the second boundaries a slow machine can cross meanwhile.
      ['future', deliver(hookSlug, 'evt_002', body, { ts: now() + 330 })],
      ['wrong id', deliver(hookSlug, 'evt_002', body, { headerId: 'evt_999' })],
      [
        'wrong secret',
        deliver(hookSlug, 'evt_002', body, { key: `whsec_${randomBytes(32).toString('base64')}` }),
      ],
      ['no signature', deliver(hookSlug, 'evt_002', body, { headers: { 'webhook-signature': '' } })],
      ['unknown', deliver('no-such-hook', 'evt_002', body)],
    ];
    for (const [name, p] of cases) {
      const res = await p;
      expect(res.statusCode, name).toBe(401);
      expect(res.json().error.code, name).toBe('UNAUTHENTICATED');
      expect(res.json().error.message, name).toBe('the webhook delivery could not be verified');
    }
    expect(await runCount()).toBe(before);
    const audit = await refusals();
    expect(audit.map((a) => a.metadata.reason)).toEqual(
      expect.arrayContaining([
        'stale_timestamp',
        'future_timestamp',
        'id_mismatch',
        'no_match',
        'missing_header',
      ]),
    );
    expect(audit.every((a) => a.actor_type === 'external')).toBe(true);
    const text = JSON.stringify(audit);
    expect(text).not.toContain('"eu"');
    expect(text).not.toContain('v1,');
    // None of those used the id up.
    expect((await deliver(hookSlug, 'evt_002', body)).statusCode).toBe(202);
  });

  it('answers 413 to an oversized body, 422 to a non-object body or an unmapped pointer; no run', async () => {
    const before = await runCount();
    const big = JSON.stringify({ order: { region: 'x' }, pad: 'a'.repeat(256 * 1024) });
    const tooBig = await deliver(hookSlug, 'evt_big', big);
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    const arr = await deliver(hookSlug, 'evt_arr', '[1,2,3]');
    expect(arr.statusCode).toBe(422);
    expect(arr.json().error.code).toBe('WEBHOOK_BODY_INVALID');
    const notJson = await deliver(hookSlug, 'evt_txt', 'hello');
    expect(notJson.statusCode).toBe(422);
    const unmapped = await deliver(hookSlug, 'evt_unmapped', JSON.stringify({ other: 1 }));
    expect(unmapped.statusCode).toBe(422);
    expect(unmapped.json().error.code).toBe('WEBHOOK_INPUT_MAPPING_FAILED');
    expect(unmapped.json().error.message).toContain('/order/region');
    expect(await runCount()).toBe(before);
    expect((await refusals()).map((a) => a.metadata.reason)).toEqual(
      expect.arrayContaining(['body_too_large', 'body_not_object', 'mapping_failed']),
    );
  });

  it('a paused trigger refuses with the same 401', async () => {
    await call('PATCH', `${base}/${hookSlug}`, { paused: true, pause_note: 'upstream incident' });
    const res = await deliver(hookSlug, 'evt_paused', JSON.stringify({ order: { region: 'x' } }));
    expect(res.statusCode).toBe(401);
    await call('PATCH', `${base}/${hookSlug}`, { paused: false });
    expect(
      (await deliver(hookSlug, 'evt_paused', JSON.stringify({ order: { region: 'x' } }))).statusCode,
    ).toBe(202);
  });

  it('answers an unknown slug exactly as a known one, through the same checks and verification', async () => {
    const stranger = `whsec_${randomBytes(32).toString('base64')}`;
    const body = JSON.stringify({ order: { region: 'eu' } });
    const big = JSON.stringify({ pad: 'a'.repeat(256 * 1024) });
    const cases: [string, (slug: string) => ReturnType<typeof deliver>][] = [
      ['no signature', (slug) => deliver(slug, 'same_1', body, { headers: { 'webhook-signature': '' } })],
      ['stale', (slug) => deliver(slug, 'same_2', body, { ts: now() - 301 })],
      ['wrong id', (slug) => deliver(slug, 'same_3', body, { headerId: 'same_9' })],
      ['wrong secret', (slug) => deliver(slug, 'same_4', body, { key: stranger })],
      ['over 256 KiB', (slug) => deliver(slug, 'same_5', big, { key: stranger })],
    ];
    // Everything but the request's own id, the clock and the shared rate budget is the same.
    const shape = (res: Awaited<ReturnType<typeof deliver>>) => {
      const {
        'x-request-id': _id,
        date: _date,
        'ratelimit-remaining': _left,
        'ratelimit-reset': _reset,
        ...headers
      } = res.headers;
      const { request_id: _rid, ...error } = res.json().error;
      return { status: res.statusCode, headers, error };
    };
    for (const [name, send] of cases) {
      const known = shape(await send(hookSlug));
      const unknown = shape(await send('no-such-hook'));
      expect(unknown, name).toEqual(known);
      expect([401, 413], name).toContain(known.status);
    }
    // The unknown slug was refused by the same step as the known one (the log is its only trace,
    // having no organization), and a well-formed delivery only after signature verification.
    const reasons = [...t.logs().matchAll(/"slug":"no-such-hook"[^}]*"reason":"([a-z_]+)"/g)].map(
      (m) => m[1],
    );
    expect(reasons).toEqual(
      expect.arrayContaining(['missing_header', 'stale_timestamp', 'id_mismatch', 'unknown_or_disabled']),
    );
    expect(reasons).not.toContain('no_match');
    expect(t.logs()).not.toContain(stranger.slice(6));
  });

  it('rotates: both secrets verify within the grace period, only the new one after it', async () => {
    const old = secret;
    const res = await call('POST', `${base}/${hookSlug}:rotate-secret`, { previous_valid_for_seconds: 3600 });
    expect(res.statusCode, res.body).toBe(200);
    const fresh = res.json().secret;
    expect(fresh).not.toBe(old);
    const secrets = res.json().webhook.secrets;
    expect(secrets).toHaveLength(2);
    expect(secrets[0].expires_at).toBeNull();
    expect(Date.parse(secrets[1].expires_at) - Date.now()).toBeGreaterThan(3500_000);
    const body = JSON.stringify({ order: { region: 'x' } });
    expect((await deliver(hookSlug, 'rot_old', body, { key: old })).statusCode).toBe(202);
    expect((await deliver(hookSlug, 'rot_new', body, { key: fresh })).statusCode).toBe(202);
    // Two hours later (the delivery's own clock and timestamp both moved): the old one is expired.
    const later = new Date(Date.now() + 2 * 3600_000);
    const ts = Math.floor(later.getTime() / 1000);
    const attempt = (key: string, id: string) =>
      receiveDelivery(t.rt.deps, {
        slug: hookSlug,
        deliveryId: id,
        headers: signedHeaders(key, id, ts, body),
        body: Buffer.from(body),
        ip: '127.0.0.1',
        userAgent: null,
        requestId: 'req',
        now: later,
      });
    await expect(attempt(old, 'rot_late_old')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect((await attempt(fresh, 'rot_late_new')).status).toBe(202);
    expect((await refusals()).at(-1)!.metadata.reason).toBe('expired_secret_only');
    // A leak: previous_valid_for_seconds 0 retires the current secret at once; at most two live.
    const leak = await call('POST', `${base}/${hookSlug}:rotate-secret`, { previous_valid_for_seconds: 0 });
    expect(leak.json().webhook.secrets).toHaveLength(1);
    expect((await deliver(hookSlug, 'leak_old', body, { key: fresh })).statusCode).toBe(401);
    expect((await deliver(hookSlug, 'leak_new', body, { key: leak.json().secret })).statusCode).toBe(202);
    secret = leak.json().secret;
  });

  it('records a refusal burst once it reaches the threshold in a minute', async () => {
    for (let i = 0; i < BURST_THRESHOLD; i++) {
      await deliver(hookSlug, `burst_${i}`, '{}', { key: `whsec_${randomBytes(32).toString('base64')}` });
    }
    const bursts = await rows(
      t,
      `select metadata from events where metadata->>'outcome' = 'refusal_burst' and event_class = 'activity'`,
    );
    expect(bursts).toHaveLength(1);
    expect(bursts[0].metadata.refusals_last_minute).toBeGreaterThanOrEqual(BURST_THRESHOLD);
    // The burst raises one pipeline_trigger_failed notification on the trigger.
    const raised = await rows(
      t,
      `select notification_type, severity, lifecycle_state, dedup_key from notifications where notification_type = 'pipeline_trigger_failed'`,
    );
    expect(raised).toEqual([
      expect.objectContaining({
        severity: 'warning',
        lifecycle_state: 'open',
        dedup_key: expect.stringContaining(hookSlug),
      }),
    ]);
  });
});
