import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';

describe('API keys', () => {
  let t: TestApp;
  let owner: string;
  beforeAll(async () => {
    t = await startTestApp();
    owner = (await t.bootstrap('acme')).api_key;
  });
  afterAll(() => t?.close());

  it('creates a key whose token is shown once and authenticates', async () => {
    const res = await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'CI deployer', role: 'developer' },
    });
    expect(res.statusCode).toBe(201);
    const key = res.json();
    expect(key.slug).toBe('ci-deployer');
    expect(key.token).toMatch(/^slc_key_[0-9A-Za-z]{49}$/);
    expect(key.token_prefix).toBe(key.token.slice(0, 12));
    expect(res.headers['x-request-id']).toBeTruthy();

    const got = await t.call('GET', '/organizations/acme/api-keys/ci-deployer', { token: owner });
    expect(got.statusCode).toBe(200);
    expect(got.json().token).toBeUndefined();

    // The key authenticates, but a developer cannot see API keys at all: 404, not 403.
    const hidden = await t.call('GET', '/organizations/acme/api-keys', { token: key.token });
    expect(hidden.statusCode).toBe(404);
    const list = await t.call('GET', '/organizations/acme/api-keys', { token: owner });
    expect(
      list
        .json()
        .api_keys.map((k: any) => k.slug)
        .sort(),
    ).toEqual(['bootstrap', 'ci-deployer']);
  });

  it('rotates and revokes', async () => {
    const created = (
      await t.call('POST', '/organizations/acme/api-keys', {
        token: owner,
        body: { name: 'rot', role: 'viewer' },
      })
    ).json();
    const rotated = await t.call('POST', '/organizations/acme/api-keys/rot:rotate', { token: owner });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().token).not.toBe(created.token);
    expect((await t.call('GET', '/organizations/acme/api-keys', { token: created.token })).statusCode).toBe(
      401,
    );
    const revoked = await t.call('POST', '/organizations/acme/api-keys/rot:revoke', { token: owner });
    expect(revoked.json().revoked_at).toBeTruthy();
    expect(
      (await t.call('GET', '/organizations/acme/api-keys', { token: rotated.json().token })).statusCode,
    ).toBe(401);
  });

  it('rejects unknown fields, bad names and duplicate slugs', async () => {
    const unknown = await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'x', role: 'viewer', extra: 1 },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('VALIDATION_FAILED');
    const badName = await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: '', role: 'viewer' },
    });
    expect(badName.json().error.code).toBe('ENTITY_NAME_INVALID');
    await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'd', role: 'viewer', slug: 'dup' },
    });
    const dup = await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'd', role: 'viewer', slug: 'dup' },
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('CONFLICT');
  });
});
