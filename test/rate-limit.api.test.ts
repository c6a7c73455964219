import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../packages/server/src/http/tokens';
import { startTestApp, type TestApp } from './support/app';

// docs/api-conventions.md#rate-limits with a limit of 5 per token, so the window fills in a few
// requests.
describe('rate limits', () => {
  let t: TestApp;
  let owner: string;
  let pat: string;
  beforeAll(async () => {
    t = await startTestApp({ env: { SLUICE_RATE_LIMIT_PER_TOKEN: '5', SLUICE_LOG_LEVEL: 'warn' } });
    const b = await t.bootstrap('acme');
    owner = b.api_key;
    pat = b.personal_access_token;
  });
  afterAll(() => t?.close());

  it('counts per token, announces the budget and answers 429 in the wrapper', async () => {
    const url = '/organizations/acme/events';
    for (let i = 1; i <= 5; i++) {
      const res = await t.call('GET', url, { token: owner });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('5');
      expect(res.headers['ratelimit-remaining']).toBe(String(5 - i));
      const reset = Number(res.headers['ratelimit-reset']);
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(60);
    }
    const limited = await t.call('GET', url, { token: owner });
    expect(limited.statusCode).toBe(429);
    const retry = Number(limited.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-request-id']).toBeTruthy();
    const body = limited.json();
    expect(body.error.code).toBe('RATE_LIMITED');
    expect(body.error.request_id).toBe(limited.headers['x-request-id']);
    // Mutations are limited too, before anything is written.
    const post = await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'late', role: 'viewer' },
    });
    expect(post.statusCode).toBe(429);

    // Another token of the same organization has its own budget.
    const other = await t.call('GET', url, { token: pat });
    expect(other.statusCode).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('4');
    const keys = await t.call('GET', '/organizations/acme/api-keys', { token: pat });
    expect(keys.json().api_keys.map((k: any) => k.slug)).toEqual(['bootstrap']);
  });

  // Each case speaks from its own client address, so the budgets above do not interfere.
  const from = (remoteAddress: string, authorization?: string) =>
    t.app.inject({
      method: 'GET',
      url: '/organizations/acme/events',
      remoteAddress,
      headers: authorization ? { authorization: `Bearer ${authorization}` } : {},
    });

  it('limits requests without a token per client address', async () => {
    for (let i = 0; i < 5; i++) expect((await from('198.51.100.1')).statusCode).toBe(401);
    const limited = await from('198.51.100.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    expect(limited.json().error.request_id).toBe(limited.headers['x-request-id']);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another address has its own budget.
    expect((await from('198.51.100.2')).statusCode).toBe(401);
  });

  it('limits invented well-formed tokens per address, with no lookup once the budget is spent', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await from('198.51.100.3', issueToken('key').token)).statusCode).toBe(401);
    }
    expect((await from('198.51.100.3', issueToken('pat').token)).statusCode).toBe(429);
    // A real token this process has never seen is refused too: the lookup is not made at all
    // (it would have answered 200), which is what bounds the database work an address can cause.
    const fresh = await t.call('POST', '/organizations/acme/api-keys', {
      token: pat,
      body: { name: 'fresh', role: 'viewer' },
    });
    expect(fresh.statusCode).toBe(201);
    expect((await from('198.51.100.3', fresh.json().token)).statusCode).toBe(429);
    // A token that authenticated before keeps working from that address (its own budget applies).
    expect((await from('198.51.100.4', fresh.json().token)).statusCode).toBe(200);
    expect((await from('198.51.100.3', fresh.json().token)).statusCode).toBe(200);
  });

  it('leaves the operations endpoints unlimited', async () => {
    for (let i = 0; i < 7; i++) {
      const res = await t.call('GET', '/healthz');
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});
