import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUpWithToken } from '../../../../../test/support/accounts';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { buildAppHost } from '../../app-host/app-host';
import { billingProfiles, events, users } from '../../db/schema/index';

const orgPath = '/organizations/acme/billing-profile';
const mePath = '/users/me/billing-profile';

const valid = () => ({
  billing_name: 'Acme Data GmbH',
  billing_email: 'invoices@acme.example',
  address: {
    line1: 'Hauptstrasse 1',
    line2: null,
    city: 'Berlin',
    region: null,
    postal_code: '10115',
  },
  country: 'DE',
  tax_id: 'DE123456789',
});

type Body = ReturnType<typeof valid>;
const email = (n: number) => `${'a'.repeat(n - '@b.example'.length)}@b.example`;

// Every bound of docs/billing.md#fields: the value at the edge is accepted, one past it is refused.
const edges: { field: string; ok: (b: Body) => void; over: (b: Body) => void }[] = [
  {
    field: 'billing_name',
    ok: (b) => (b.billing_name = 'n'.repeat(100)),
    over: (b) => (b.billing_name = 'n'.repeat(101)),
  },
  { field: 'billing_name', ok: (b) => (b.billing_name = 'n'), over: (b) => (b.billing_name = '') },
  {
    field: 'billing_email',
    ok: (b) => (b.billing_email = email(255)),
    over: (b) => (b.billing_email = email(256)),
  },
  {
    field: 'address.line1',
    ok: (b) => (b.address.line1 = 'l'.repeat(255)),
    over: (b) => (b.address.line1 = 'l'.repeat(256)),
  },
  {
    field: 'address.line2',
    ok: (b) => ((b.address as any).line2 = 'l'.repeat(255)),
    over: (b) => ((b.address as any).line2 = 'l'.repeat(256)),
  },
  {
    field: 'address.city',
    ok: (b) => (b.address.city = 'c'.repeat(120)),
    over: (b) => (b.address.city = 'c'.repeat(121)),
  },
  {
    field: 'address.region',
    ok: (b) => ((b.address as any).region = 'r'.repeat(120)),
    over: (b) => ((b.address as any).region = 'r'.repeat(121)),
  },
  {
    field: 'address.postal_code',
    ok: (b) => (b.address.postal_code = 'p'.repeat(32)),
    over: (b) => (b.address.postal_code = 'p'.repeat(33)),
  },
  { field: 'tax_id', ok: (b) => (b.tax_id = 't'.repeat(64)), over: (b) => (b.tax_id = 't'.repeat(65)) },
  {
    field: 'country',
    ok: (b) => (b.country = 'ZW'),
    over: (b) => (b.country = 'XX'),
  },
  {
    field: 'country',
    ok: (b) => (b.country = 'US'),
    over: (b) => (b.country = 'us'),
  },
  {
    field: 'country',
    ok: (b) => (b.country = 'GB'),
    over: (b) => (b.country = 'GBR'),
  },
  {
    field: 'country',
    ok: (b) => (b.country = 'AX'),
    over: (b) => (b.country = 'UK'),
  },
];

describe('billing profiles', { timeout: 60_000 }, () => {
  let t: TestApp;
  let appHost: FastifyInstance;
  let owner: { personal_access_token: string; api_key: string; user_slug: string };

  beforeAll(async () => {
    t = await startTestApp();
    appHost = await buildAppHost(t.rt.deps);
    owner = await t.bootstrap('acme');
  }, 120_000);
  afterAll(async () => {
    await appHost?.close();
    await t?.close();
  });

  it('is 404 before the first PUT, 201 when created, 200 when replaced', async () => {
    for (const [path, token] of [
      [orgPath, owner.api_key],
      [mePath, owner.personal_access_token],
    ]) {
      const none = await t.call('GET', path, { token });
      expect(none.statusCode).toBe(404);
      expect(none.json().error.code).toBe('NOT_FOUND');

      const created = await t.call('PUT', path, { token, body: valid() });
      expect(created.statusCode).toBe(201);
      const body = created.json();
      expect(body).toMatchObject({ ...valid(), owner_type: path === orgPath ? 'organization' : 'user' });
      expect(body.owner_slug).toBe(path === orgPath ? 'acme' : owner.user_slug);

      const changed = { ...valid(), tax_id: null, billing_name: 'Acme Holding' };
      const replaced = await t.call('PUT', path, { token, body: changed });
      expect(replaced.statusCode).toBe(200);
      expect(replaced.json()).toMatchObject(changed);
      expect(replaced.json().created_at).toBe(body.created_at);
      expect((await t.call('GET', path, { token })).json()).toEqual(replaced.json());
    }
  });

  it('accepts every bound at its edge and refuses one past it, naming the field', async () => {
    for (const e of edges) {
      const ok = valid();
      e.ok(ok);
      const accepted = await t.call('PUT', orgPath, { token: owner.api_key, body: ok });
      expect(accepted.statusCode, `${e.field} at its edge`).toBe(200);

      const over = valid();
      e.over(over);
      const refused = await t.call('PUT', orgPath, { token: owner.api_key, body: over });
      expect(refused.statusCode, `${e.field} past its edge`).toBe(400);
      const err = refused.json().error;
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.validation_errors.map((v: { path: string }) => v.path)).toContain(e.field);
    }
  });

  it('refuses missing and unknown fields, and keeps the stored profile', async () => {
    const before = (await t.call('GET', orgPath, { token: owner.api_key })).json();
    const { address, ...noAddress } = valid();
    const { country, ...noCountry } = valid();
    for (const body of [
      noAddress,
      noCountry,
      { ...valid(), plan: 'free' },
      { ...valid(), address: { ...address, street: 'x' } },
      { ...valid(), billing_email: 'not an email' },
    ]) {
      const res = await t.call('PUT', orgPath, { token: owner.api_key, body });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
    }
    expect((await t.call('GET', orgPath, { token: owner.api_key })).json()).toEqual(before);
  });

  it('takes `country` beside the address, or in it as clients of the old shape send it', async () => {
    const { country, ...rest } = valid();
    const legacy = { ...rest, address: { ...rest.address, country: 'FR' } };
    const res = await t.call('PUT', orgPath, { token: owner.api_key, body: legacy });
    expect(res.statusCode).toBe(200);
    expect(res.json().country).toBe('FR');
    expect(res.json().address).not.toHaveProperty('country');
    expect((await t.call('GET', orgPath, { token: owner.api_key })).json()).toMatchObject({
      country: 'FR',
      address: rest.address,
    });

    const same = await t.call('PUT', orgPath, {
      token: owner.api_key,
      body: { ...valid(), address: { ...valid().address, country: 'DE' } },
    });
    expect(same.statusCode).toBe(200);
    expect(same.json().country).toBe('DE');

    for (const [body, path] of [
      [{ ...valid(), address: { ...valid().address, country: 'FR' } }, 'address.country'],
      [{ ...rest, address: { ...rest.address, country: 'XX' } }, 'address.country'],
      [rest, 'country'],
    ] as const) {
      const refused = await t.call('PUT', orgPath, { token: owner.api_key, body });
      expect(refused.statusCode).toBe(400);
      const err = refused.json().error;
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.validation_errors.map((v: { path: string }) => v.path)).toEqual([path]);
    }
    expect((await t.call('GET', orgPath, { token: owner.api_key })).json().country).toBe('DE');
  });

  it('records an update event without the address or any value of the profile', async () => {
    const marker = 'Unmistakable Lane 42';
    const body = valid();
    body.address.line1 = marker;
    await t.call('PUT', orgPath, { token: owner.api_key, body });
    const list = await t.call('GET', '/organizations/acme/events?entity_type=organization&action=update', {
      token: owner.api_key,
    });
    expect(list.statusCode).toBe(200);
    const billingEvents = list.json().events.filter((e: any) => e.metadata.billing_profile);
    expect(billingEvents.length).toBeGreaterThan(0);
    const stored = JSON.stringify(await t.rt.deps.db.select().from(events));
    for (const secretish of [marker, 'Berlin', '10115', 'invoices@acme.example', 'DE123456789']) {
      expect(stored).not.toContain(secretish);
    }
  });

  it('goes with the account when the account is deleted', async () => {
    const solo = await signUpWithToken(t, appHost, { email: 'payer@example.com', name: 'Payer' });
    expect((await t.call('PUT', mePath, { token: solo.token, body: valid() })).statusCode).toBe(201);
    const [u] = await t.rt.deps.db.select().from(users).where(eq(users.email, 'payer@example.com'));
    const del = await t.call('POST', '/users/me/deletion-request', {
      token: solo.token,
      body: { confirmation: 'DELETE MY ACCOUNT' },
    });
    expect(del.json().state).toBe('completed');
    expect(await t.rt.deps.db.select().from(billingProfiles).where(eq(billingProfiles.userId, u.id))).toEqual(
      [],
    );
  });

  it('is refused to an API key, which has no user', async () => {
    const res = await t.call('GET', mePath, { token: owner.api_key });
    expect([401, 403]).toContain(res.statusCode);
  });
});
