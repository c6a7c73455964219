import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The error wrapper, with its request id matching the header. */
function expectWrapper(
  res: { statusCode: number; headers: Record<string, any>; json(): any },
  status: number,
  code: string,
) {
  expect(res.statusCode).toBe(status);
  const id = res.headers['x-request-id'];
  expect(id).toMatch(UUID);
  const body = res.json();
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.request_id).toBe(id);
  return body.error;
}

describe('operations', () => {
  let t: TestApp;
  let owner: string;
  beforeAll(async () => {
    t = await startTestApp();
    owner = (await t.bootstrap('acme')).api_key;
  });
  afterAll(() => t?.close());

  it('answers health, readiness and metrics without a token', async () => {
    const health = await t.call('GET', '/healthz');
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    expect(health.headers['x-request-id']).toMatch(UUID);

    const ready = await t.call('GET', '/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', store: t.kind });

    await t.call('GET', '/organizations/acme/events', { token: owner });
    const metrics = await t.call('GET', '/metrics');
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.body).toContain('# TYPE sluice_http_requests_total counter');
    // Labelled by route pattern, never by the concrete path (bounded cardinality).
    expect(metrics.body).toMatch(
      /sluice_http_requests_total\{method="GET",route="\/organizations\/:organization\/events",status="200"\} [1-9]/,
    );
    expect(metrics.body).toMatch(
      /sluice_http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]/,
    );
    expect(metrics.body).toContain('sluice_http_request_duration_seconds_bucket');
    expect(metrics.body).not.toContain('/organizations/acme');
  });

  it('puts X-Request-Id on every response and keeps a caller-supplied UUID', async () => {
    const given = randomUUID();
    const ok = await t.call('GET', '/organizations/acme/events', {
      token: owner,
      headers: { 'x-request-id': given },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-request-id']).toBe(given);

    // Not a UUID: replaced, so log lines cannot be forged through the header.
    const forged = await t.call('GET', '/healthz', { headers: { 'x-request-id': 'x\nlevel=fatal' } });
    expect(forged.headers['x-request-id']).toMatch(UUID);

    const unauth = expectWrapper(
      await t.call('GET', '/organizations/acme/events', { headers: { 'x-request-id': given } }),
      401,
      'UNAUTHENTICATED',
    );
    expect(unauth.request_id).toBe(given);
    expectWrapper(
      await t.call('GET', '/organizations/acme/events', { token: 'slc_key_nonsense' }),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('answers an unknown route 404 and a wrong method 405 with Allow', async () => {
    expectWrapper(await t.call('GET', '/no/such/route', { token: owner }), 404, 'NOT_FOUND');
    expectWrapper(
      await t.call('GET', '/organizations/acme/events/extra', { token: owner }),
      404,
      'NOT_FOUND',
    );
    const wrong = await t.call('DELETE', '/organizations/acme/events', { token: owner });
    expectWrapper(wrong, 405, 'METHOD_NOT_ALLOWED');
    expect(wrong.headers.allow).toBe('GET');
    const put = await t.call('PUT', '/organizations/acme/api-keys', { token: owner, body: {} });
    expectWrapper(put, 405, 'METHOD_NOT_ALLOWED');
    expect(String(put.headers.allow).split(', ').sort()).toEqual(['GET', 'POST']);
  });

  it('rejects bad bodies in the wrapper: malformed, too large, wrong type, prototype pollution', async () => {
    const url = '/organizations/acme/api-keys';
    const malformed = expectWrapper(
      await t.call('POST', url, { token: owner, body: '{"name": "x",' }),
      400,
      'VALIDATION_FAILED',
    );
    expect(malformed.validation_errors).toEqual([
      { path: '(body)', code: 'invalid_json', message: 'the request body is not valid JSON' },
    ]);

    const big = JSON.stringify({ name: 'big', role: 'viewer', description: 'x'.repeat(1024 * 1024) });
    expectWrapper(await t.call('POST', url, { token: owner, body: big }), 413, 'PAYLOAD_TOO_LARGE');

    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const res = await t.call('POST', url, {
        token: owner,
        body: 'name=x&role=viewer',
        headers: { 'content-type': type },
      });
      expectWrapper(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }

    for (const evil of [
      '{"name":"p","role":"viewer","__proto__":{"isAdmin":true}}',
      '{"name":"p","role":"viewer","constructor":{"prototype":{"isAdmin":true}}}',
      '{"name":"p","role":"viewer","nested":{"__proto__":{"x":1}}}',
    ]) {
      const res = await t.call('POST', url, { token: owner, body: evil });
      expectWrapper(res, 400, 'VALIDATION_FAILED');
    }
    expect(({} as any).isAdmin).toBeUndefined();
    const list = await t.call('GET', `${url}?limit=100`, { token: owner });
    expect(list.json().api_keys.map((k: any) => k.slug)).toEqual(['bootstrap']);
  });

  it('never writes tokens, passwords or authorization headers to the log', async () => {
    const canary = `slc_key_canary${randomUUID().replace(/-/g, '')}`;
    const password = `pw-canary-${randomUUID()}`;
    const before = t.logs().length;
    await t.call('GET', `/organizations/acme/events?request_id=${canary}`, { token: canary });
    await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'Canary', role: 'viewer', token: canary, password, description: null },
      headers: { 'x-api-key': canary, cookie: `sluice_session=${canary}` },
    });
    await t.call('POST', '/organizations/acme/api-keys', {
      token: canary,
      body: `{"password": "${password}", "broken": `,
    });
    // Something was logged for these requests, and none of it holds a secret.
    const written = t.logs().slice(before);
    expect(written).toContain('"path":"/organizations/acme/api-keys"');
    expect(written).not.toContain(canary);
    expect(written).not.toContain(password);
    expect(written).not.toContain(owner);
    expect(t.logs()).not.toContain(owner);
    expect(written.toLowerCase()).not.toContain('bearer');
    for (const line of written.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('answers text the store cannot hold with 400 and keeps the values out of the log', async () => {
    const canary = `canary-${randomUUID()}`;
    const before = t.logs().length;
    // PostgreSQL text cannot hold NUL; the insert fails inside the store, not in validation.
    const res = await t.call('POST', '/organizations/acme/api-keys', {
      token: owner,
      body: { name: 'nul', role: 'viewer', description: `${canary}\u0000` },
    });
    const error = expectWrapper(res, 400, 'VALIDATION_FAILED');
    expect(error.validation_errors[0].code).toBe('invalid_characters');
    expect(t.logs().slice(before)).not.toContain(canary);
  });
});
