import { expect } from 'vitest';
import type { TestApp } from './app';

// The browser's part of an OAuth authorization against a fake provider that consents at once:
// POST …/oauth:authorize, open the consent page, follow its redirect into GET /oauth/callback.

export async function connectOAuth(t: TestApp, token: string, org: string, dataSource: string) {
  const started = await t.call('POST', `/organizations/${org}/data-sources/${dataSource}/oauth:authorize`, {
    token,
  });
  expect(started.statusCode, started.body).toBe(200);
  const consent = await fetch(started.json().authorization_url, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  const back = new URL(consent.headers.get('location')!);
  const done = await t.call('GET', `${back.pathname}${back.search}`);
  expect(done.statusCode, done.body).toBe(200);
  return done.json();
}
