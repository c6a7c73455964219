import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionCookieOf } from '../../../../test/support/accounts';
import { startTestApp, type TestApp } from '../../../../test/support/app';
import { PE, setupTriggerPipelines } from '../../../../test/support/triggers';
import { buildAppHost } from '../app-host/app-host';
import { SECRET_FIELD } from './no-store';

// An answer that carries a raw token, secret or CSRF token must not be cached anywhere:
// Cache-Control: no-store on every route whose success schema names one (at any depth), on both
// hosts, and only there.

type Json = Record<string, any>;

/** Operations of the document whose 2xx JSON schema has a credential field, at any depth. */
function operationsWithSecrets(doc: Json): string[] {
  const resolve = (s: Json): Json => {
    let node: any = doc;
    for (const p of String(s.$ref).replace(/^#\//, '').split('/')) node = node[p];
    return node;
  };
  const fields = (s: unknown, seen: Set<unknown>): string[] => {
    if (!s || typeof s !== 'object' || seen.has(s)) return [];
    seen.add(s);
    const o = s as Json;
    if (o.$ref) return fields(resolve(o), seen);
    const out: string[] = [];
    for (const [k, v] of Object.entries<unknown>(o.properties ?? {})) {
      if (SECRET_FIELD.test(k)) out.push(k);
      out.push(...fields(v, seen));
    }
    for (const k of ['items', 'additionalProperties', 'not']) out.push(...fields(o[k], seen));
    for (const k of ['oneOf', 'anyOf', 'allOf']) for (const x of o[k] ?? []) out.push(...fields(x, seen));
    return out;
  };
  const found: string[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const ok = Object.entries<Json>(op.responses ?? {}).filter(([status]) => status.startsWith('2'));
      const schemas = ok.map(([, res]) => res.content?.['application/json']?.schema);
      if (schemas.some((s) => fields(s, new Set()).length > 0)) found.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return found.sort();
}

describe('Cache-Control: no-store on answers carrying a credential', { timeout: 60_000 }, () => {
  let t: TestApp;
  let host: FastifyInstance;
  let owner: string;
  let pat: string;
  beforeAll(async () => {
    t = await startTestApp();
    host = await buildAppHost(t.rt.deps);
    owner = (await setupTriggerPipelines(t)).owner;
    // The bootstrap minted a personal access token too; make another through the API.
    const me = await t.call('POST', '/users', {
      body: { email: 'cache@example.com', password: 'cache-probe-password', name: 'Cache' },
    });
    expect(me.statusCode, me.body).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await host?.close();
    await t?.close();
  });

  it('marks sign-in, the session read and token creation on the app host', async () => {
    const signIn = await host.inject({
      method: 'POST',
      url: '/session',
      payload: { email: 'cache@example.com', password: 'cache-probe-password' },
    });
    expect(signIn.statusCode, signIn.body).toBe(201);
    expect(signIn.json().csrf_token).toEqual(expect.any(String));
    expect(signIn.headers['cache-control']).toBe('no-store');
    const cookie = sessionCookieOf(signIn);
    const csrf = signIn.json().csrf_token;

    const read = await host.inject({ method: 'GET', url: '/session', cookies: { sluice_session: cookie } });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().csrf_token).toBe(csrf);
    expect(read.headers['cache-control']).toBe('no-store');

    const minted = await host.inject({
      method: 'POST',
      url: '/session/personal-access-tokens',
      cookies: { sluice_session: cookie },
      headers: { 'x-csrf-token': csrf },
      payload: { name: 'first token' },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    expect(minted.headers['cache-control']).toBe('no-store');
    pat = minted.json().token;

    // The BFF mounts the API's routes: the same rule holds under /api.
    const viaBff = await host.inject({
      method: 'POST',
      url: '/api/users/me/personal-access-tokens',
      cookies: { sluice_session: cookie },
      headers: { 'x-csrf-token': csrf },
      payload: { name: 'second token' },
    });
    expect(viaBff.statusCode, viaBff.body).toBe(201);
    expect(viaBff.headers['cache-control']).toBe('no-store');
    const list = await host.inject({
      method: 'GET',
      url: '/api/users/me/personal-access-tokens',
      cookies: { sluice_session: cookie },
    });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.headers['cache-control']).toBeUndefined();
  });

  it('marks API key create and rotate, token create and webhook secrets, not other reads', async () => {
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

    const triggers = `${PE}/pipelines/hooked/triggers`;
    const hook = await t.call('POST', triggers, {
      token: owner,
      body: { name: 'Cache hook', kind: 'webhook', webhook: { input_mapping: {} } },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    expect(hook.json().secret).toMatch(/^whsec_/);
    expect(hook.headers['cache-control']).toBe('no-store');
    const again = await t.call('POST', `${triggers}/${hook.json().slug}:rotate-secret`, {
      token: owner,
      body: { previous_valid_for_seconds: 0 },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.headers['cache-control']).toBe('no-store');

    for (const url of ['/organizations/acme/api-keys', `${triggers}/${hook.json().slug}`]) {
      const read = await t.call('GET', url, { token: owner });
      expect(read.statusCode, url).toBe(200);
      expect(read.headers['cache-control'], url).toBeUndefined();
    }
  });

  it('covers every operation whose success answer has a credential field', async () => {
    const doc = (await t.call('GET', '/openapi.json')).json();
    // Each is called above, or in the suite named; a new one fails here until it is added.
    expect(operationsWithSecrets(doc)).toEqual(
      [
        'POST /organizations/{organization}/api-keys',
        'POST /organizations/{organization}/api-keys/{api_key_slug}:rotate',
        'POST /users/me/personal-access-tokens',
        'POST /organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/triggers',
        'POST /organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/triggers/{pipeline_trigger_slug}:rotate-secret',
        'POST /setup', // packages/server/src/modules/system/setup.api.test.ts
      ].sort(),
    );
  });
});
