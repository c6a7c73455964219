import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';

describe('projects and project environments', () => {
  let t: TestApp;
  let owner: string;
  let pat: string;
  const base = '/organizations/acme/projects';
  const conflictCode = 'PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED';

  beforeAll(async () => {
    t = await startTestApp();
    const boot = await t.bootstrap('acme');
    owner = boot.api_key;
    pat = boot.personal_access_token;
    for (const body of [
      { name: 'Staging', slug: 'staging' },
      { name: 'Production', slug: 'prod', protected: true },
      { name: 'Old', slug: 'old' },
    ]) {
      expect(
        (await t.call('POST', '/organizations/acme/environments', { token: owner, body })).statusCode,
      ).toBe(201);
    }
  });
  afterAll(() => t?.close());

  it('creates, reads, updates, sorts and deletes projects', async () => {
    const created = await t.call('POST', base, {
      token: owner,
      body: { name: 'Billing Sync', description: 'Stripe to the warehouse' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      slug: 'billing-sync',
      name: 'Billing Sync',
      description: 'Stripe to the warehouse',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    await t.call('POST', base, { token: owner, body: { name: 'Analytics', slug: 'analytics' } });
    await t.call('POST', base, { token: owner, body: { name: 'Zeta', slug: 'zeta' } });
    const dup = await t.call('POST', base, { token: owner, body: { name: 'x', slug: 'zeta' } });
    expect(dup.json().error.code).toBe('CONFLICT');
    expect(
      (await t.call('POST', base, { token: owner, body: { name: 'x', description: 'd'.repeat(2001) } }))
        .statusCode,
    ).toBe(400);
    // Same name twice: the second gets a suffixed slug.
    const again = (await t.call('POST', base, { token: owner, body: { name: 'Zeta' } })).json();
    expect(again.slug).toMatch(/^zeta-[a-z0-9]{6}$/);

    const names = async (q: string) =>
      (await t.call('GET', `${base}?${q}`, { token: owner })).json().projects.map((p: any) => p.name);
    expect(await names('sort_by=project_name&order=asc')).toEqual([
      'Analytics',
      'Billing Sync',
      'Zeta',
      'Zeta',
    ]);
    const page1 = (
      await t.call('GET', `${base}?sort_by=project_name&order=asc&limit=2`, { token: owner })
    ).json();
    expect(page1.has_more).toBe(true);
    const page2 = (
      await t.call('GET', `${base}?sort_by=project_name&order=asc&limit=2&cursor=${page1.next_cursor}`, {
        token: owner,
      })
    ).json();
    expect(page2.projects.map((p: any) => p.name)).toEqual(['Zeta', 'Zeta']);
    expect(page2.has_more).toBe(false);

    const patched = await t.call('PATCH', `${base}/analytics`, {
      token: owner,
      body: { description: 'dashboards' },
    });
    expect(patched.json()).toMatchObject({ name: 'Analytics', description: 'dashboards' });
    expect((await names('sort_by=project_updated_at'))[0]).toBe('Analytics');
    expect(
      (await t.call('PATCH', `${base}/analytics`, { token: owner, body: { slug: 'x' } })).statusCode,
    ).toBe(400);
    expect((await t.call('DELETE', `${base}/${again.slug}`, { token: owner })).statusCode).toBe(204);
    expect((await t.call('GET', `${base}/${again.slug}`, { token: owner })).statusCode).toBe(404);
  });

  it('enables environments for a project with one default', async () => {
    const pe = `${base}/billing-sync/environments`;
    const enabled = await t.call('PUT', `${pe}/staging`, { token: owner, body: { is_default: true } });
    // Enabling creates the link (201); the same request again only confirms it (200).
    expect(enabled.statusCode).toBe(201);
    const again = await t.call('PUT', `${pe}/staging`, { token: owner, body: { is_default: true } });
    expect(again.statusCode).toBe(200);
    expect(enabled.json()).toMatchObject({ slug: 'staging', is_default: true, protected: false });
    // No body at all: the defaults.
    expect((await t.call('PUT', `${pe}/old`, { token: owner })).json().is_default).toBe(false);
    expect(
      (
        await t.call('PUT', `${pe}/prod`, {
          token: owner,
          body: { is_default: true, protected_environment_confirmation: 'prod' },
        })
      ).json().is_default,
    ).toBe(true);
    const list = (await t.call('GET', `${pe}?sort_by=environment_name&order=asc`, { token: owner })).json();
    expect(list.environments.map((e: any) => [e.slug, e.is_default])).toEqual([
      ['old', false],
      ['prod', true],
      ['staging', false],
    ]);
    expect((await t.call('PUT', `${pe}/staging`, { token: owner, body: { extra: 1 } })).statusCode).toBe(400);
    expect((await t.call('PUT', `${pe}/missing`, { token: owner })).statusCode).toBe(404);
    expect((await t.call('PUT', `${base}/nope/environments/staging`, { token: owner })).statusCode).toBe(404);

    // A soft-deleted environment leaves the project's list and cannot be enabled.
    await t.call('DELETE', '/organizations/acme/environments/old', { token: owner });
    const after = (await t.call('GET', pe, { token: owner })).json();
    expect(after.environments.map((e: any) => e.slug).sort()).toEqual(['prod', 'staging']);
    expect((await t.call('PUT', `${pe}/old`, { token: owner })).statusCode).toBe(409);
    expect((await t.call('DELETE', `${pe}/old`, { token: owner })).statusCode).toBe(204);
    expect((await t.call('DELETE', `${pe}/old`, { token: owner })).statusCode).toBe(404);

    const events = (
      await t.call('GET', '/organizations/acme/events?entity_type=project_environment', { token: owner })
    ).json();
    expect(events.events.map((e: any) => e.action)).toEqual(expect.arrayContaining(['enable', 'disable']));
  });

  it('needs the exact slug to enable or disable a protected environment', async () => {
    const pe = `${base}/analytics/environments/prod`;
    for (const attempt of [
      {},
      { body: { protected_environment_confirmation: 'staging' } },
      { body: { protected_environment_confirmation: null } },
    ]) {
      const r = await t.call('PUT', pe, { token: owner, ...attempt });
      expect(r.statusCode).toBe(409);
      expect(r.json().error.code).toBe(conflictCode);
    }
    expect(
      (await t.call('PUT', `${pe}?protected_environment_confirmation=prod`, { token: owner })).statusCode,
    ).toBe(201);
    for (const q of ['', '?protected_environment_confirmation=staging']) {
      const r = await t.call('DELETE', `${pe}${q}`, { token: owner });
      expect(r.statusCode).toBe(409);
      expect(r.json().error.code).toBe(conflictCode);
    }
    expect(
      (await t.call('DELETE', `${pe}?protected_environment_confirmation=prod`, { token: owner })).statusCode,
    ).toBe(204);
  });

  it('is invisible to another organization', async () => {
    await t.call('POST', '/organizations', { token: pat, body: { name: 'Globex', slug: 'globex' } });
    const key = (
      await t.call('POST', '/organizations/globex/api-keys', {
        token: pat,
        body: { name: 'globex owner', role: 'owner' },
      })
    ).json().token;
    expect((await t.call('GET', `${base}/billing-sync`, { token: key })).statusCode).toBe(404);
    expect(
      (await t.call('PUT', `${base}/billing-sync/environments/staging`, { token: key, body: { extra: 1 } }))
        .statusCode,
    ).toBe(404);
    expect((await t.call('GET', '/organizations/globex/projects', { token: key })).json().projects).toEqual(
      [],
    );
    expect(
      (await t.call('GET', '/organizations/globex/projects/billing-sync', { token: key })).statusCode,
    ).toBe(404);
  });
});
