import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/support/app';
import { buildAppHost } from './app-host';

// The app host's browser protections on every kind of response: the page, JSON, errors and the
// refusal of a bearer token.

describe('app host security headers', { timeout: 60_000 }, () => {
  let t: TestApp;
  let host: FastifyInstance;
  beforeAll(async () => {
    t = await startTestApp();
    host = await buildAppHost(t.rt.deps);
    await host.ready();
  }, 120_000);
  afterAll(async () => {
    await host?.close();
    await t?.close();
  });

  it('sends CSP, X-Frame-Options DENY and nosniff on pages, JSON and errors', async () => {
    const responses = [
      await host.inject({ method: 'GET', url: '/' }),
      await host.inject({ method: 'GET', url: '/healthz' }),
      // A page the app's own router handles (the app shell), and an API path nothing serves.
      await host.inject({ method: 'GET', url: '/no-such-page' }),
      await host.inject({ method: 'GET', url: '/api/no-such-route' }),
      await host.inject({ method: 'GET', url: '/session' }),
      await host.inject({ method: 'GET', url: '/', headers: { authorization: 'Bearer slc_pat_x' } }),
    ];
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 404, 401, 400]);
    for (const r of responses) {
      const csp = String(r.headers['content-security-policy']);
      expect(csp, r.body).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(r.headers['x-frame-options']).toBe('DENY');
      expect(r.headers['x-content-type-options']).toBe('nosniff');
    }
  });
});
