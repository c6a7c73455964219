import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/support/app';

// A response that carries a raw token must not be cached anywhere: Cache-Control: no-store on
// every route whose response schema names one, and only there.

describe('Cache-Control: no-store on responses carrying a token', { timeout: 60_000 }, () => {
  let t: TestApp;
  let owner: string;
  let pat: string;
  beforeAll(async () => {
    t = await startTestApp();
    const b = await t.bootstrap('acme');
    owner = b.api_key;
    pat = b.personal_access_token;
  }, 120_000);
  afterAll(() => t?.close());

  it('marks API key create and rotate and personal access token create, not other reads', async () => {
    const created = await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'Cache probe', role: 'viewer' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().token).toMatch(/^slc_key_/);
    expect(created.headers['cache-control']).toBe('no-store');

    const rotated = await t.call('POST', `/organizations/acme/api-keys/${created.json().slug}:rotate`, {
      token: owner,
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');

    const minted = await t.call('POST', '/users/me/personal-access-tokens', {
      token: pat,
      body: { name: 'Cache probe' },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    expect(minted.json().token).toMatch(/^slc_pat_/);
    expect(minted.headers['cache-control']).toBe('no-store');

    const list = await t.call('GET', '/organizations/acme/api-keys', { token: owner });
    expect(list.statusCode).toBe(200);
    expect(list.headers['cache-control']).toBeUndefined();
  });

  it('covers every operation whose success response has a token field', async () => {
    const doc = (await t.call('GET', '/openapi.json')).json();
    const withToken: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const [status, res] of Object.entries<any>(op.responses ?? {})) {
          const props = res.content?.['application/json']?.schema?.properties ?? {};
          if (status.startsWith('2') && 'token' in props) withToken.push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
    // The three above; a new one fails here until it is called in the test above.
    expect(withToken.sort()).toEqual([
      'POST /organizations/{organization}/api-keys',
      'POST /organizations/{organization}/api-keys/{api_key_slug}:rotate',
      'POST /users/me/personal-access-tokens',
    ]);
  });
});
