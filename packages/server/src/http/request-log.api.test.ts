import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/support/app';

// The request line is written without redaction paths, from whitelisted fields only: it must
// still hold no credential, and keep the fields it always had.

describe('request log line', { timeout: 60_000 }, () => {
  let t: TestApp;
  let owner: string;
  beforeAll(async () => {
    t = await startTestApp();
    owner = (await t.bootstrap('acme')).api_key;
  }, 120_000);
  afterAll(() => t?.close());

  const lines = () =>
    t
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);

  it('writes one line per answered request with its whitelisted fields and no secret', async () => {
    const id = '0b7e2c1a-93f4-4c55-8a1e-5f0d3c2b1a09';
    const res = await t.call('GET', '/organizations/acme/events?limit=2&action=create', {
      token: owner,
      headers: { 'x-request-id': id, cookie: 'sid=cookie-canary-41' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const mine = lines().filter((l) => l.reqId === id);
    expect(mine).toHaveLength(1);
    const [line] = mine;
    expect(line).toMatchObject({
      level: 30,
      service: 'sluice',
      host: 'api',
      msg: 'request completed',
      req: { id, method: 'GET', path: '/organizations/acme/events', query_keys: ['limit', 'action'] },
      res: { statusCode: 200 },
    });
    expect(typeof line.responseTime).toBe('number');
    expect(Object.keys(line.req).sort()).toEqual(['id', 'ip', 'method', 'path', 'query_keys']);
    expect(JSON.stringify(line)).not.toContain(owner);
    expect(JSON.stringify(line)).not.toContain('cookie-canary-41');
  });

  it('masks a token pasted into the path', async () => {
    const id = '1c8f3d2b-a4e5-4d66-9b2f-6a1e4d3c2b10';
    const res = await t.call('GET', `/organizations/acme/api-keys/${owner}`, {
      token: owner,
      headers: { 'x-request-id': id },
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    const mine = lines().filter((l) => l.reqId === id);
    expect(mine).toHaveLength(1);
    expect(mine[0].req.path).toBe('/organizations/acme/api-keys/slc_key_[redacted]');
    expect(t.logs()).not.toContain(owner);
  });

  it('masks a token pasted as a query parameter name, and decodes names as URLSearchParams does', async () => {
    const id = '2d9a4e3c-b5f6-4e77-8c3a-7b2f5e4d3c21';
    const res = await t.call('GET', `/organizations/acme/events?${owner}=1&limit=2&a%20b=3&c+d&&`, {
      token: owner,
      headers: { 'x-request-id': id },
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(200);
    const mine = lines().filter((l) => l.reqId === id);
    expect(mine).toHaveLength(1);
    expect(mine[0].req.query_keys).toEqual(['slc_key_[redacted]', 'limit', 'a b', 'c d']);
    expect(t.logs()).not.toContain(owner);
  });
});
