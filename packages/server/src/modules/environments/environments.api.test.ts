import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';

describe('environments', () => {
  let t: TestApp;
  let owner: string;
  let pat: string;
  const base = '/organizations/acme/environments';
  const create = (body: Record<string, unknown>) => t.call('POST', base, { token: owner, body });

  beforeAll(async () => {
    t = await startTestApp();
    const boot = await t.bootstrap('acme');
    owner = boot.api_key;
    pat = boot.personal_access_token;
  });
  afterAll(() => t?.close());

  it('creates with every field, reads, updates and sorts', async () => {
    const res = await create({ name: 'Staging', description: 'pre-production', color: 'amber' });
    expect(res.statusCode).toBe(201);
    const env = res.json();
    expect(env).toEqual({
      slug: 'staging',
      name: 'Staging',
      description: 'pre-production',
      color: 'amber',
      protected: false,
      run_timeout_seconds: null,
      deleted_at: null,
      delete_reason: null,
      created_at: expect.any(String),
      updated_at: env.created_at,
    });
    const limited = await t.call('PATCH', '/organizations/acme/environments/staging', {
      token: owner,
      body: { run_timeout_seconds: 900 },
    });
    expect(limited.json().run_timeout_seconds).toBe(900);
    const cleared = await t.call('PATCH', '/organizations/acme/environments/staging', {
      token: owner,
      body: { run_timeout_seconds: null },
    });
    expect(cleared.json().run_timeout_seconds).toBeNull();
    const tooLong = await t.call('PATCH', '/organizations/acme/environments/staging', {
      token: owner,
      body: { run_timeout_seconds: 8 * 86400 },
    });
    expect(tooLong.statusCode).toBe(400);
    const defaults = (await create({ name: 'Dev' })).json();
    expect(defaults).toMatchObject({ slug: 'dev', color: 'gray', protected: false, description: null });
    expect((await create({ name: 'Another', slug: 'dev' })).statusCode).toBe(409);
    expect((await create({ name: 'x', color: 'pink' })).json().error.code).toBe('VALIDATION_FAILED');
    expect((await create({ name: 'x', description: 'd'.repeat(2001) })).statusCode).toBe(400);
    expect((await create({ name: '' })).json().error.code).toBe('ENTITY_NAME_INVALID');
    expect((await create({ name: 'x', extra: true })).statusCode).toBe(400);

    const patched = await t.call('PATCH', `${base}/dev`, {
      token: owner,
      body: { name: 'Development', color: 'green', description: null },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ slug: 'dev', name: 'Development', color: 'green' });
    expect(patched.json().updated_at >= patched.json().created_at).toBe(true);

    const byName = await t.call('GET', `${base}?sort_by=environment_name&order=asc&limit=1`, {
      token: owner,
    });
    const first = byName.json();
    expect(first.environments.map((e: any) => e.slug)).toEqual(['dev']);
    expect(first.has_more).toBe(true);
    const second = await t.call(
      'GET',
      `${base}?sort_by=environment_name&order=asc&limit=1&cursor=${first.next_cursor}`,
      { token: owner },
    );
    expect(second.json().environments.map((e: any) => e.slug)).toEqual(['staging']);
    const newest = await t.call('GET', base, { token: owner });
    expect(newest.json().environments.map((e: any) => e.slug)).toEqual(['dev', 'staging']);
    expect((await t.call('GET', `${base}?sort_by=project_name`, { token: owner })).statusCode).toBe(400);
    expect((await t.call('GET', `${base}/nope`, { token: owner })).statusCode).toBe(404);
  });

  it('soft-deletes with a reason (query or body), restores and purges', async () => {
    await create({ name: 'Temp one', slug: 'temp-one' });
    await create({ name: 'Temp two', slug: 'temp-two' });
    const del = await t.call('DELETE', `${base}/temp-one?delete_reason=replaced%20by%20dev`, {
      token: owner,
    });
    expect(del.statusCode).toBe(204);
    const delBody = await t.call('DELETE', `${base}/temp-two`, {
      token: owner,
      body: { delete_reason: 'not needed' },
    });
    expect(delBody.statusCode).toBe(204);
    const tooLong = await t.call('DELETE', `${base}/dev`, {
      token: owner,
      body: { delete_reason: 'x'.repeat(2001) },
    });
    expect(tooLong.statusCode).toBe(400);

    const got = (await t.call('GET', `${base}/temp-one`, { token: owner })).json();
    expect(got.deleted_at).toEqual(expect.any(String));
    expect(got.delete_reason).toBe('replaced by dev');
    expect((await t.call('GET', `${base}/temp-two`, { token: owner })).json().delete_reason).toBe(
      'not needed',
    );

    const visible = (await t.call('GET', base, { token: owner })).json().environments.map((e: any) => e.slug);
    expect(visible).not.toContain('temp-one');
    const all = (await t.call('GET', `${base}?include_deleted=true`, { token: owner })).json();
    expect(all.environments.map((e: any) => e.slug)).toEqual(
      expect.arrayContaining(['temp-one', 'temp-two', 'dev']),
    );

    // A deleted environment keeps its slug, refuses changes and a second delete.
    expect((await create({ name: 'T', slug: 'temp-one' })).statusCode).toBe(409);
    const patchDeleted = await t.call('PATCH', `${base}/temp-one`, { token: owner, body: { name: 'T' } });
    expect(patchDeleted.statusCode).toBe(409);
    expect((await t.call('DELETE', `${base}/temp-one`, { token: owner })).statusCode).toBe(409);

    const restored = await t.call('POST', `${base}/temp-one:restore`, { token: owner });
    expect(restored.statusCode).toBe(200);
    expect(restored.json()).toMatchObject({ slug: 'temp-one', deleted_at: null, delete_reason: null });
    expect((await t.call('POST', `${base}/temp-one:restore`, { token: owner })).statusCode).toBe(409);
    // Purge only a soft-deleted environment.
    const purgeLive = await t.call('POST', `${base}/temp-one:purge`, { token: owner });
    expect(purgeLive.statusCode).toBe(409);
    expect(purgeLive.json().error.code).toBe('CONFLICT');

    const purged = await t.call('POST', `${base}/temp-two:purge`, { token: owner });
    expect(purged.statusCode).toBe(204);
    expect((await t.call('GET', `${base}/temp-two`, { token: owner })).statusCode).toBe(404);
    // The slug is free again.
    expect((await create({ name: 'Temp two', slug: 'temp-two' })).statusCode).toBe(201);

    const events = (
      await t.call('GET', '/organizations/acme/events?entity_type=environment&entity_slug=temp-two', {
        token: owner,
      })
    ).json();
    expect(events.events.map((e: any) => e.action).sort()).toEqual(['create', 'create', 'delete', 'purge']);
  });

  describe('protected environment', () => {
    const conflictCode = 'PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED';
    beforeAll(async () => {
      expect(
        (await create({ name: 'Production', slug: 'prod', protected: true, color: 'red' })).statusCode,
      ).toBe(201);
    });

    it('needs the exact slug to unprotect; other changes pass', async () => {
      const rename = await t.call('PATCH', `${base}/prod`, { token: owner, body: { name: 'Prod' } });
      expect(rename.statusCode).toBe(200);
      const without = await t.call('PATCH', `${base}/prod`, { token: owner, body: { protected: false } });
      expect(without.statusCode).toBe(409);
      expect(without.json().error.code).toBe(conflictCode);
      const wrong = await t.call('PATCH', `${base}/prod`, {
        token: owner,
        body: { protected: false, protected_environment_confirmation: 'staging' },
      });
      expect(wrong.statusCode).toBe(409);
      expect(wrong.json().error.code).toBe(conflictCode);
      const ok = await t.call('PATCH', `${base}/prod`, {
        token: owner,
        body: { protected: false, protected_environment_confirmation: 'prod' },
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().protected).toBe(false);
      // Protecting needs nothing; the query parameter is accepted as well as the body field.
      expect(
        (await t.call('PATCH', `${base}/prod`, { token: owner, body: { protected: true } })).json().protected,
      ).toBe(true);
      const viaQuery = await t.call('PATCH', `${base}/prod?protected_environment_confirmation=prod`, {
        token: owner,
        body: { protected: false },
      });
      expect(viaQuery.json().protected).toBe(false);
      await t.call('PATCH', `${base}/prod`, { token: owner, body: { protected: true } });
      const audit = (
        await t.call('GET', '/organizations/acme/security-audit-events?entity_slug=prod', { token: owner })
      ).json();
      expect(audit.events.some((e: any) => e.metadata.protected === false)).toBe(true);
    });

    it('needs the exact slug to delete and purge', async () => {
      for (const q of ['', '?protected_environment_confirmation=staging']) {
        const r = await t.call('DELETE', `${base}/prod${q}`, { token: owner });
        expect(r.statusCode).toBe(409);
        expect(r.json().error.code).toBe(conflictCode);
      }
      const wrongBody = await t.call('DELETE', `${base}/prod`, {
        token: owner,
        body: { protected_environment_confirmation: 'pro' },
      });
      expect(wrongBody.json().error.code).toBe(conflictCode);
      const del = await t.call('DELETE', `${base}/prod`, {
        token: owner,
        body: { delete_reason: 'moving', protected_environment_confirmation: 'prod' },
      });
      expect(del.statusCode).toBe(204);
      const purgeWithout = await t.call('POST', `${base}/prod:purge`, { token: owner });
      expect(purgeWithout.json().error.code).toBe(conflictCode);
      const purgeWrong = await t.call('POST', `${base}/prod:purge`, {
        token: owner,
        body: { protected_environment_confirmation: 'dev' },
      });
      expect(purgeWrong.json().error.code).toBe(conflictCode);
      const purged = await t.call('POST', `${base}/prod:purge?protected_environment_confirmation=prod`, {
        token: owner,
      });
      expect(purged.statusCode).toBe(204);
    });
  });

  it('hides environments from other organizations and checks permissions', async () => {
    // An API key of another organization (its owner also belongs to acme, the key does not).
    await t.call('POST', '/organizations', { token: pat, body: { name: 'Globex', slug: 'globex' } });
    const other = {
      api_key: (
        await t.call('POST', '/organizations/globex/api-keys', {
          token: pat,
          body: { name: 'globex owner', role: 'owner' },
        })
      ).json().token as string,
    };
    const foreign = await t.call('GET', `${base}/dev`, { token: other.api_key });
    expect(foreign.statusCode).toBe(404);
    const foreignWrite = await t.call('PATCH', `${base}/dev`, { token: other.api_key, body: { name: 'x' } });
    expect(foreignWrite.statusCode).toBe(404);
    expect(
      (await t.call('GET', '/organizations/globex/environments', { token: other.api_key })).json()
        .environments,
    ).toEqual([]);
    const developer = (
      await t.call('POST', '/organizations/acme/api-keys', {
        token: owner,
        body: { name: 'dev key', role: 'developer' },
      })
    ).json().token;
    // Developers read environments but do not manage them.
    expect((await t.call('GET', `${base}/dev`, { token: developer })).statusCode).toBe(200);
    const denied = await t.call('POST', base, { token: developer, body: { name: 'nope' } });
    expect(denied.statusCode).toBe(403);
  });
});
