import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { buildApp } from '../../app';
import { openRuntime } from '../../runtime';

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

  it('refuses a revoked key on its next request on its host, and within SLUICE_API_KEY_CACHE_MS on every other', async () => {
    // A second API host on the same store: on PostgreSQL a runtime of its own (own pool, own
    // in-process rate-limit and address budgets, own keys in memory), as another machine would
    // run, keeping a key it has read for BOUND ms; PGlite has one process per data directory, so
    // there it is a second app on the same runtime, which hears the revocation at once.
    const BOUND = 400;
    const other =
      t.kind === 'postgres'
        ? await openRuntime(
            { ...t.rt.deps.config, apiKeyCacheMs: BOUND },
            { logStream: new PassThrough(), supervise: false },
          )
        : null;
    const hostB = await buildApp(other?.deps ?? t.rt.deps);
    try {
      const key = (
        await t.call('POST', '/organizations/acme/api-keys', {
          token: owner,
          body: { name: 'Two hosts', role: 'viewer' },
        })
      ).json().token as string;
      const onB = async () =>
        (
          await hostB.inject({
            method: 'GET',
            url: '/organizations/acme/events?limit=20',
            headers: { authorization: `Bearer ${key}` },
          })
        ).statusCode;
      const onA = async () => (await t.call('GET', '/organizations/acme/events', { token: key })).statusCode;
      // Both hosts have served the key (anything they keep about it is warm).
      for (let i = 0; i < 3; i++) {
        expect(await onA()).toBe(200);
        expect(await onB()).toBe(200);
      }
      const revoked = await t.call('POST', '/organizations/acme/api-keys/two-hosts:revoke', { token: owner });
      expect(revoked.statusCode).toBe(200);
      expect(await onA()).toBe(401);
      if (!other) expect(await onB()).toBe(401);
      // Once the bound has passed since the revocation, another host refuses it too.
      await new Promise((r) => setTimeout(r, BOUND));
      expect(await onB()).toBe(401);
      expect(await onA()).toBe(401);
    } finally {
      await hostB.close();
      await other?.close();
    }
  });

  it('keeps a key read in memory on its host until the bound or a change (statements counted)', async () => {
    const key = (
      await t.call('POST', '/organizations/acme/api-keys', {
        token: owner,
        body: { name: 'Kept', role: 'viewer' },
      })
    ).json().token as string;
    const reads: string[] = [];
    const store = t.rt.deps.store;
    const prepared = store.prepared;
    store.prepared = (name, text, values) => {
      if (name === 'sluice_auth_keys') reads.push(name);
      return prepared(name, text, values);
    };
    try {
      const get = async (token: string) =>
        (await t.call('GET', '/organizations/acme/events?limit=5', { token })).statusCode;
      expect(t.rt.deps.config.apiKeyCacheMs).toBeGreaterThan(0);
      expect(await get(key)).toBe(200);
      const first = reads.length;
      expect(first).toBeGreaterThan(0);
      for (let i = 0; i < 5; i++) expect(await get(key)).toBe(200);
      // Served from memory: no further read of the key (unless the bound ran out between two).
      expect(reads.length - first).toBeLessThan(5);
      // A change on this host drops it: the key is read again, and a rotated token is refused.
      const rotated = await t.call('POST', '/organizations/acme/api-keys/kept:rotate', { token: owner });
      expect(rotated.statusCode).toBe(200);
      const before = reads.length;
      expect(await get(key)).toBe(401);
      expect(reads.length).toBe(before + 1);
      expect(await get(rotated.json().token)).toBe(200);
    } finally {
      store.prepared = prepared;
    }
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
