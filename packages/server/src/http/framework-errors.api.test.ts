import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/support/app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Sends raw bytes and returns everything the server answers before it closes. */
function raw(port: number, data: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(data));
    let out = '';
    s.on('data', (d) => {
      out += d;
    });
    s.on('close', () => resolve(out));
    s.on('error', () => resolve(out));
  });
}

function parseRaw(text: string) {
  const [head, body] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

// Errors raised by Fastify's router and Node's HTTP parser, before any route runs.
describe('errors outside the routes', () => {
  let t: TestApp;
  let token: string;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({ env: { SLUICE_LOG_LEVEL: 'warn' } });
    token = (await t.bootstrap('acme')).api_key;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t?.close());

  function expectWrapped(status: number, headers: Record<string, any>, body: any, code: string) {
    expect(headers['x-request-id']).toMatch(UUID);
    expect(body.error.code).toBe(code);
    expect(body.error.request_id).toBe(headers['x-request-id']);
    expect(Object.keys(body)).toEqual(['error']);
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
  }

  it('answers malformed percent-encoding in the wrapper', async () => {
    for (const url of ['/organizations/%E0%A4%A', '/organizations/acme/projects/%zz', '/%']) {
      const res = await t.call('GET', url, { token });
      expect(res.statusCode, url).toBe(400);
      expectWrapped(res.statusCode, res.headers, res.json(), 'VALIDATION_FAILED');
      expect(res.json().error.validation_errors[0].path).toBe('(path)');
    }
  });

  it('answers path parameters over the router limit in the wrapper', async () => {
    for (const url of [
      `/organizations/${'a'.repeat(600)}`,
      `/organizations/acme/projects/${'p'.repeat(501)}`,
    ]) {
      const res = await t.call('GET', url, { token });
      expect(res.statusCode).toBe(400);
      expectWrapped(res.statusCode, res.headers, res.json(), 'VALIDATION_FAILED');
    }
  });

  it('answers an oversized header block with 431 in the wrapper', async () => {
    const res = parseRaw(
      await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(res.status).toBe(431);
    expectWrapped(res.status, res.headers, res.body, 'HEADERS_TOO_LARGE');
  });

  it('answers a request that is not HTTP with 400 in the wrapper', async () => {
    const res = parseRaw(await raw(port, 'NOT HTTP AT ALL\r\n\r\n'));
    expect(res.status).toBe(400);
    expectWrapped(res.status, res.headers, res.body, 'VALIDATION_FAILED');
  });

  it('answers a request timeout with 408 in the wrapper', async () => {
    // Node raises ERR_HTTP_REQUEST_TIMEOUT on the server after requestTimeout; raise the same
    // event on a real connection instead of waiting minutes for the parser's own clock.
    const serverSide = new Promise<net.Socket>((r) => t.app.server.once('connection', r));
    const answer = raw(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const socket = await serverSide;
    const err = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
    t.app.server.emit('clientError', err, socket);
    const res = parseRaw(await answer);
    expect(res.status).toBe(408);
    expectWrapped(res.status, res.headers, res.body, 'REQUEST_TIMEOUT');
  });
});
