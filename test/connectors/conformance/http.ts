import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ConformanceFixture, configOf, contextFor, type Target } from './fixture';

// HTTP: a small API on loopback that answers its health path only to its bearer token and
// serves an OpenAPI document (what schema import reads).

const TOKEN = `conformance-${Math.random().toString(36).slice(2, 12)}`;
const OPENAPI = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'People', version: '1' },
  paths: { '/people': { get: { operationId: 'listPeople', responses: { 200: { description: 'ok' } } } } },
});

const connection = (t: Target, token: string) => {
  const base = `http://${t.host}:${t.port}`;
  return {
    conn: {
      config: configOf('http', {
        base_url: base,
        health_path: '/health',
        openapi_url: `${base}/openapi.json`,
        timeout_seconds: 1,
        openapi_fetch_timeout_seconds: 1,
        allow_private_hosts: t.allowPrivate,
      }),
      credentials: { bearer_token: token },
    },
    ctx: contextFor(t),
  };
};

export const httpFixture: ConformanceFixture = {
  at: (t) => connection(t, TOKEN),
  silentTimeoutSeconds: 1,
  sinkOperation: { operation_type: 'http', method: 'POST', path: '/people', body: '{{input}}' },
  async live() {
    const server = http.createServer((req, res) => {
      if (req.url === '/openapi.json')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(OPENAPI);
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const at = { host: '127.0.0.1', port: (server.address() as AddressInfo).port, allowPrivate: true };
    return {
      good: connection(at, TOKEN),
      badCredentials: connection(at, 'not-the-right-token'),
      roundTrip: { name: 'GET /people' },
      close: () => new Promise<void>((r) => server.close(() => r())),
    };
  },
};
