import { sql } from 'drizzle-orm';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionCookieOf } from '../../../../test/support/accounts';
import { startTestApp, type TestApp } from '../../../../test/support/app';
import { pushLogsPipeline } from '../../../../test/support/runs';
import { setUserPassword } from '../modules/identity/set-password';
import { buildAppHost } from './app-host';

const EMAIL = 'owner@example.com';
const PASSWORD = 'bff-owner-password-1';

// The app host's /api mount: the API's own routes and services behind the cookie session.
describe('app host backend-for-frontend', { timeout: 60_000 }, () => {
  let t: TestApp;
  let host: FastifyInstance;
  let owner: { api_key: string; personal_access_token: string };
  let cookie: string;
  let csrf: string;
  const as = (res: LightMyRequestResponse) => ({ cookie: sessionCookieOf(res), csrf: res.json().csrf_token });
  const api = (method: 'GET' | 'POST' | 'DELETE', url: string, o: Record<string, unknown> = {}) =>
    host.inject({
      method,
      url: url.startsWith('/api/') ? url : `/api${url}`,
      cookies: { sluice_session: cookie },
      ...o,
    } as any);

  beforeAll(async () => {
    t = await startTestApp();
    host = await buildAppHost(t.rt.deps);
    owner = await t.bootstrap('acme', EMAIL);
    await setUserPassword(t.rt.deps, { email: EMAIL, password: PASSWORD });
    const signedIn = await host.inject({
      method: 'POST',
      url: '/session',
      payload: { email: EMAIL, password: PASSWORD },
    });
    expect(signedIn.statusCode).toBe(201);
    ({ cookie, csrf } = as(signedIn));
  }, 120_000);
  afterAll(async () => {
    await host?.close();
    await t?.close();
  });

  it('serves the API routes with the session: reads need the cookie only', async () => {
    const orgs = await api('GET', '/organizations');
    expect(orgs.statusCode).toBe(200);
    expect(orgs.json().organizations.map((o: { slug: string }) => o.slug)).toEqual(['acme']);
    const anonymous = await host.inject({ method: 'GET', url: '/api/organizations' });
    expect(anonymous.statusCode).toBe(401);
    expect((await api('GET', '/no-such-route')).statusCode).toBe(404);
  });

  it('changes state only same-origin and with the session CSRF token', async () => {
    const body = { payload: { slug: 'web', name: 'Web' } };
    const noToken = await api('POST', '/organizations/acme/projects', body);
    expect(noToken.statusCode).toBe(403);
    expect(noToken.json().error.code).toBe('FORBIDDEN');
    const crossSite = await api('POST', '/organizations/acme/projects', {
      ...body,
      headers: { 'x-csrf-token': csrf, 'sec-fetch-site': 'same-site', origin: 'http://127.0.0.1:8080' },
    });
    expect(crossSite.statusCode).toBe(403);
    const foreignOrigin = await api('POST', '/organizations/acme/projects', {
      ...body,
      headers: { 'x-csrf-token': csrf, origin: 'https://evil.example' },
    });
    expect(foreignOrigin.statusCode).toBe(403);
    const ok = await api('POST', '/organizations/acme/projects', {
      ...body,
      headers: { 'x-csrf-token': csrf, 'sec-fetch-site': 'same-origin' },
    });
    expect(ok.statusCode, ok.body).toBe(201);
    // The same service wrote it: the API host sees the project.
    const viaApi = await t.call('GET', '/organizations/acme/projects/web', { token: owner.api_key });
    expect(viaApi.statusCode).toBe(200);
  });

  it('refuses a cross-origin sign-in and rotates the session id at sign-in', async () => {
    const cross = await host.inject({
      method: 'POST',
      url: '/session',
      headers: { 'sec-fetch-site': 'cross-site' },
      payload: { email: EMAIL, password: PASSWORD },
    });
    expect(cross.statusCode).toBe(403);
    const first = await host.inject({
      method: 'POST',
      url: '/session',
      payload: { email: EMAIL, password: PASSWORD },
    });
    const again = await host.inject({
      method: 'POST',
      url: '/session',
      cookies: { sluice_session: sessionCookieOf(first) },
      payload: { email: EMAIL, password: PASSWORD },
    });
    expect(sessionCookieOf(again)).not.toBe(sessionCookieOf(first));
    expect(again.json().csrf_token).not.toBe(first.json().csrf_token);
    // The session the browser held before signing in is over.
    const old = await host.inject({
      method: 'GET',
      url: '/session',
      cookies: { sluice_session: sessionCookieOf(first) },
    });
    expect(old.statusCode).toBe(401);
  });

  it('refuses bearer tokens on /api and ignores cookies on the API host', async () => {
    const bearer = await host.inject({
      method: 'GET',
      url: '/api/organizations',
      headers: { authorization: `Bearer ${owner.personal_access_token}` },
    });
    expect(bearer.statusCode).toBe(400);
    expect(bearer.json().error.code).toBe('API_TOKEN_NOT_ACCEPTED');
    const onApi = await t.call('GET', '/organizations', { headers: { cookie: `sluice_session=${cookie}` } });
    expect(onApi.statusCode).toBe(401);
  });

  it('serves the app shell with a strict content security policy', async () => {
    const page = await host.inject({ method: 'GET', url: '/runs?state=failed' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'(;|$)/);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
    const traversal = await host.inject({ method: 'GET', url: '/assets/..%2f..%2fpackage.json' });
    expect(traversal.statusCode).toBe(404);
  });

  it('streams a run and its log over SSE, resumes after Last-Event-ID, and downloads the log', async () => {
    const key = { token: owner.api_key };
    const ok = async (method: string, url: string, body?: unknown) => {
      const r = await t.call(method, url, { ...key, body });
      expect(r.statusCode, r.body).toBeLessThan(300);
      return r.json();
    };
    const version = await pushLogsPipeline(ok);
    // A finished run with 250 lines, written straight to the store as a worker would have.
    await t.rt.deps.db.execute(sql`
      insert into pipeline_runs (organization_id, pipeline_id, environment_id, slug, spec_hash, state, started_at, finished_at)
      select p.organization_id, p.id, e.id, 'r1', ${version.spec_hash}, 'succeeded', now(), now()
      from pipelines p join environments e on e.organization_id = p.organization_id
      where p.slug = 'pl' and e.slug = 'dev'`);
    await t.rt.deps.db.execute(sql`
      insert into pipeline_run_logs (run_id, seq, last_seq, lines)
      select r.id, 1, 250, jsonb_agg(jsonb_build_array('src', 'info', 'line ' || g, 0) order by g)
        from pipeline_runs r, generate_series(1, 250) g where r.slug = 'r1' group by r.id`);
    const base = '/api/organizations/acme/projects/logs/environments/dev/runs/r1';
    const events = (payload: string) =>
      payload
        .trim()
        .split('\n\n')
        .map((block) => ({
          id: /^id: (.*)$/m.exec(block)?.[1],
          event: /^event: (.*)$/m.exec(block)![1],
          data: JSON.parse(/^data: (.*)$/m.exec(block)![1]),
        }));
    const all = await api('GET', `${base}/log-stream`);
    expect(all.headers['content-type']).toMatch(/text\/event-stream/);
    const got = events(all.payload);
    expect(got.map((e) => e.event)).toEqual(['run', 'logs', 'logs', 'logs', 'end']);
    expect(got[0].data.state).toBe('succeeded');
    const lines = got.filter((e) => e.event === 'logs').flatMap((e) => e.data);
    expect(lines.map((l: { message: string }) => l.message)).toEqual(
      Array.from({ length: 250 }, (_, i) => `line ${i + 1}`),
    );
    // A reconnecting browser sends the last id it saw and gets only what came after.
    const resumed = events(
      (await api('GET', `${base}/log-stream`, { headers: { 'last-event-id': got[2].id } })).payload,
    );
    expect(resumed.filter((e) => e.event === 'logs').flatMap((e) => e.data)).toHaveLength(50);
    const text = await api('GET', `${base}/log-download`);
    expect(text.headers['content-disposition']).toContain('r1.log');
    expect(text.payload.trim().split('\n')).toHaveLength(250);
    expect((await api('GET', `${base.replace('/r1', '/nope')}/log-stream`)).statusCode).toBe(404);
    // Another organization's run is not there for this session.
    expect(
      (await api('GET', '/api/organizations/other/projects/logs/environments/dev/runs/r1/log-stream'))
        .statusCode,
    ).toBe(404);
  });
});
