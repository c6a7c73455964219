import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { httpConfigSchema, httpCredentialsSchema, httpStatementSchema } from './config';
import { httpConnector } from './index';

// The HTTP connector against a real local server (127.0.0.1, so private hosts are allowed
// where a test needs to reach it).

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };

const OPENAPI3 = `openapi: 3.0.3
info: {title: Shop, version: "2.1"}
paths:
  /orders/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string}}
    get:
      operationId: getOrder
      summary: One order
      tags: [orders]
      parameters:
        - {name: expand, in: query, schema: {type: string}}
      responses: {'200': {description: ok}}
    delete:
      responses: {'204': {description: gone}}
`;

const SWAGGER2 = JSON.stringify({
  swagger: '2.0',
  info: { title: 'Legacy', version: '1' },
  paths: {
    '/things': {
      post: {
        operationId: 'createThing',
        parameters: [{ name: 'body', in: 'body', required: true, schema: { type: 'object' } }],
        responses: { 201: { description: 'created' } },
      },
    },
  },
});

describe('HTTP connector', () => {
  let server: http.Server;
  let base: string;
  const seen: Seen[] = [];
  const ctx: ConnectorContext = { policy: { allowPrivate: true }, limits: defaultLimits };
  const conn = (config: Record<string, unknown>, credentials: Record<string, unknown> | null = null) => ({
    config: httpConfigSchema.parse({ base_url: base, ...config }),
    credentials: credentials ? httpCredentialsSchema.parse(credentials) : null,
  });
  const fails = async (p: Promise<unknown>, code: string) => {
    const err = await p.then(
      () => null,
      (e) => e,
    );
    expect(err, `expected ${code}`).toBeInstanceOf(ConnectorError);
    expect(err.code).toBe(code);
    return err as ConnectorError;
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        const url = new URL(req.url!, 'http://x');
        const status = Number(url.searchParams.get('status') ?? 200);
        switch (url.pathname) {
          case '/status':
            res.writeHead(status).end();
            return;
          case '/hang':
            return; // never answers
          case '/redirect': {
            const n = Number(url.searchParams.get('n') ?? 0);
            const to = url.searchParams.get('to') ?? (n > 0 ? `/redirect?n=${n - 1}` : '/echo');
            res.writeHead(302, { location: to }).end();
            return;
          }
          case '/big':
            res.writeHead(200, { 'content-type': 'text/plain' });
            res.end('x'.repeat(4096));
            return;
          case '/openapi.yaml':
            res.writeHead(200, { 'content-type': 'application/yaml' }).end(OPENAPI3);
            return;
          case '/swagger.json':
            res.writeHead(200, { 'content-type': 'application/json' }).end(SWAGGER2);
            return;
          case '/invalid.json':
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ openapi: '3.0.0', info: { title: 'x' }, paths: { '/a': { get: {} } } }));
            return;
          case '/external-ref.json':
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({
                openapi: '3.0.0',
                info: { title: 'refs', version: '1' },
                paths: {
                  '/a': {
                    get: {
                      parameters: [{ $ref: `${base}/shared.json#/p` }],
                      responses: { 200: { description: 'ok' } },
                    },
                  },
                },
              }),
            );
            return;
          default:
            res.writeHead(status, {
              'content-type': 'application/json',
              'set-cookie': 'session=secret',
              'x-request-id': 'abc',
            });
            res.end(JSON.stringify({ method: req.method, url: req.url, body }));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  describe('schemas', () => {
    it('applies the documented defaults and rejects credentials in URLs', () => {
      expect(httpConfigSchema.parse({ base_url: 'https://api.example.com' })).toEqual({
        base_url: 'https://api.example.com',
        health_path: '/',
        timeout_seconds: 5,
        openapi_fetch_timeout_seconds: 10,
        allow_private_hosts: false,
      });
      expect(httpConfigSchema.safeParse({ base_url: 'ftp://x.example' }).success).toBe(false);
      expect(httpConfigSchema.safeParse({ base_url: 'https://u:p@x.example' }).success).toBe(false);
      expect(
        httpConfigSchema.safeParse({ base_url: 'https://x.example', timeout_seconds: 301 }).success,
      ).toBe(false);
      expect(
        httpConfigSchema.safeParse({ base_url: 'https://x.example', health_path: 'https://evil' }).success,
      ).toBe(false);
      expect(httpConfigSchema.safeParse({ base_url: 'https://x.example', extra: 1 }).success).toBe(false);
    });

    it('takes bearer or Basic, never both, and a password only with a user name', () => {
      expect(httpCredentialsSchema.safeParse({}).success).toBe(true);
      expect(httpCredentialsSchema.safeParse({ bearer_token: 't' }).success).toBe(true);
      expect(httpCredentialsSchema.safeParse({ username: 'u', password: 'p' }).success).toBe(true);
      expect(
        httpCredentialsSchema.safeParse({ bearer_token: 't', username: 'u', password: 'p' }).success,
      ).toBe(false);
      expect(httpCredentialsSchema.safeParse({ username: 'u' }).success).toBe(false);
      expect(httpCredentialsSchema.safeParse({ password: 'p' }).success).toBe(false);
    });

    it('keeps credentials out of statements', () => {
      const ok = { type: 'http', method: 'GET', path: '/x' };
      expect(httpStatementSchema.safeParse(ok).success).toBe(true);
      expect(httpStatementSchema.safeParse({ ...ok, headers: { Authorization: 'Bearer x' } }).success).toBe(
        false,
      );
      expect(httpStatementSchema.safeParse({ ...ok, path: 'https://evil.example/x' }).success).toBe(false);
      expect(httpStatementSchema.safeParse({ ...ok, method: 'TRACE' }).success).toBe(false);
    });
  });

  describe('test', () => {
    it('passes on 2xx and sends the bearer token', async () => {
      await httpConnector.test(conn({ health_path: '/healthy' }, { bearer_token: 'tok-1' }), ctx);
      const last = seen.at(-1)!;
      expect(last.method).toBe('GET');
      expect(last.url).toBe('/healthy');
      expect(last.headers.authorization).toBe('Bearer tok-1');
    });

    it('sends Basic credentials and keeps base_url paths', async () => {
      await httpConnector.test(
        conn({ base_url: `${base}/v1/`, health_path: 'ping' }, { username: 'ann', password: 'pw' }),
        ctx,
      );
      expect(seen.at(-1)!.url).toBe('/v1/ping');
      expect(seen.at(-1)!.headers.authorization).toBe(`Basic ${Buffer.from('ann:pw').toString('base64')}`);
    });

    it.each([
      [405, 'HEALTH_PATH_NOT_GET', /GET-compatible health_path/],
      [401, 'AUTHENTICATION_FAILED', /credentials or permissions are wrong/],
      [403, 'PERMISSION_DENIED', /credentials or permissions are wrong/],
      [500, 'REMOTE_ERROR', /HTTP 500/],
    ])('maps %i to %s', async (status, code, message) => {
      const err = await fails(
        httpConnector.test(conn({ health_path: `/status?status=${status}` }), ctx),
        code,
      );
      expect(err.message).toMatch(message);
    });

    it('blocks private hosts unless the policy allows them, and redirects to metadata always', async () => {
      const closed: ConnectorContext = { ...ctx, policy: { allowPrivate: false } };
      await fails(httpConnector.test(conn({}), closed), 'PRIVATE_HOST_BLOCKED');
      const port = new URL(base).port;
      await fails(
        httpConnector.test(conn({ base_url: `http://localhost:${port}` }), closed),
        'PRIVATE_HOST_BLOCKED',
      );
      const hop = `/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data')}`;
      await fails(httpConnector.test(conn({ health_path: hop }), ctx), 'PRIVATE_HOST_BLOCKED');
      // An allowlisted first hop does not open the way to another private address.
      const listed: ConnectorContext = {
        ...ctx,
        policy: { allowPrivate: false, allowCidrs: ['127.0.0.1/32'] },
      };
      const inner = `/redirect?to=${encodeURIComponent('http://10.0.0.1/')}`;
      await fails(httpConnector.test(conn({ health_path: inner }), listed), 'PRIVATE_HOST_BLOCKED');
    });

    it('follows up to five redirects, drops credentials on a new origin, and stops after', async () => {
      await httpConnector.test(conn({ health_path: '/redirect?n=4' }, { bearer_token: 't' }), ctx);
      expect(seen.at(-1)!.url).toBe('/echo');
      expect(seen.at(-1)!.headers.authorization).toBe('Bearer t');
      await fails(httpConnector.test(conn({ health_path: '/redirect?n=5' }), ctx), 'TOO_MANY_REDIRECTS');
      const port = new URL(base).port;
      const other = `/redirect?to=${encodeURIComponent(`http://localhost:${port}/elsewhere`)}`;
      await httpConnector.test(conn({ health_path: other }, { bearer_token: 't' }), ctx);
      expect(seen.at(-1)!.url).toBe('/elsewhere');
      expect(seen.at(-1)!.headers.authorization).toBeUndefined();
    });

    it('bounds the response size', async () => {
      const small: ConnectorContext = { ...ctx, limits: { ...defaultLimits, maxResponseBytes: 1024 } };
      await fails(httpConnector.test(conn({ health_path: '/big' }), small), 'RESPONSE_TOO_LARGE');
    });
  });

  describe('importSchema', () => {
    it('is empty without openapi_url', async () => {
      expect(await httpConnector.discover.importSchema(conn({}), ctx)).toEqual({
        schema_type: 'empty',
        type: 'http',
      });
    });

    it('reads OpenAPI 3 (YAML) and Swagger 2 (JSON)', async () => {
      const v3 = await httpConnector.discover.importSchema(
        conn({ openapi_url: `${base}/openapi.yaml` }),
        ctx,
      );
      expect(v3).toEqual({
        schema_type: 'openapi',
        type: 'http',
        title: 'Shop',
        version: '2.1',
        operations: [
          {
            operation_id: 'getOrder',
            method: 'GET',
            path: '/orders/{id}',
            summary: 'One order',
            tags: ['orders'],
            parameters: [
              { name: 'id', in: 'path', required: true },
              { name: 'expand', in: 'query', required: false },
            ],
          },
          {
            operation_id: null,
            method: 'DELETE',
            path: '/orders/{id}',
            summary: null,
            tags: [],
            parameters: [{ name: 'id', in: 'path', required: true }],
          },
        ],
      });
      const v2: any = await httpConnector.discover.importSchema(
        conn({ openapi_url: `${base}/swagger.json` }),
        ctx,
      );
      expect(v2.title).toBe('Legacy');
      expect(v2.operations.map((o: any) => `${o.method} ${o.path} ${o.operation_id}`)).toEqual([
        'POST /things createThing',
      ]);
    });

    it('reports invalid and unreachable documents, and never follows external $refs', async () => {
      const invalid = await fails(
        httpConnector.discover.importSchema(conn({ openapi_url: `${base}/invalid.json` }), ctx),
        'INVALID_OPENAPI',
      );
      expect(invalid.message).toMatch(/not valid/);
      expect(invalid.message).not.toContain('openapi.invalid');
      await fails(
        httpConnector.discover.importSchema(conn({ openapi_url: `${base}/status?status=404` }), ctx),
        'OPENAPI_UNREACHABLE',
      );
      await fails(
        httpConnector.discover.importSchema(
          conn({ openapi_url: 'http://no-such-host.invalid/openapi.json' }),
          ctx,
        ),
        'OPENAPI_UNREACHABLE',
      );
      const before = seen.length;
      await httpConnector.discover.importSchema(conn({ openapi_url: `${base}/external-ref.json` }), ctx);
      expect(seen.slice(before).map((s) => s.url)).toEqual(['/external-ref.json']);
    });
  });

  describe('execute', () => {
    const run = (
      statement: Record<string, unknown>,
      parameters: Record<string, unknown> = {},
      creds = null,
    ) =>
      httpConnector.query.execute(
        conn({}, creds),
        httpStatementSchema.parse({ type: 'http', ...statement }),
        parameters,
        ctx,
      );

    it('substitutes parameters: URL-encoded in the path, values in query, headers and JSON body', async () => {
      const result = await run(
        {
          method: 'POST',
          path: '/items/{{id}}',
          query_params: { q: '{{q}}', tag: ['a', '{{tag}}'], skip: null },
          headers: { 'X-Trace': 'trace-{{id}}' },
          body: { count: '{{count}}', nested: { flag: '{{flag}}', list: ['{{id}}'] }, text: 'id={{id}}' },
        },
        { id: 'a/b c', q: 'x&y', tag: 'b', count: 3, flag: true },
      );
      const last = seen.at(-1)!;
      expect(last.url).toBe('/items/a%2Fb%20c?q=x%26y&tag=a&tag=b');
      expect(last.headers['x-trace']).toBe('trace-a/b c');
      expect(last.headers['content-type']).toBe('application/json');
      expect(JSON.parse(last.body)).toEqual({
        count: 3,
        nested: { flag: true, list: ['a/b c'] },
        text: 'id=a/b c',
      });
      expect(result.result_type).toBe('http');
      expect(result.payload.status).toBe(200);
      expect(result.payload.headers).toEqual(expect.objectContaining({ 'x-request-id': 'abc' }));
      expect((result.payload.headers as any)['set-cookie']).toBeUndefined();
      expect(result.payload.body).toEqual(expect.objectContaining({ method: 'POST' }));
    });

    it('does not let a parameter break out of a JSON value', async () => {
      await run(
        { method: 'PUT', path: '/x', body: { name: '{{name}}' } },
        { name: '", "admin": true, "x": "' },
      );
      expect(JSON.parse(seen.at(-1)!.body)).toEqual({ name: '", "admin": true, "x": "' });
    });

    it('sends URL-encoded and multipart forms, and null only as JSON', async () => {
      await run(
        {
          method: 'POST',
          path: '/form',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: { a: '{{a}}', b: 2 },
        },
        { a: 'x y&z' },
      );
      expect(seen.at(-1)!.body).toBe('a=x+y%26z&b=2');
      await run({
        method: 'POST',
        path: '/multi',
        headers: { 'content-type': 'multipart/form-data' },
        body: { field: 'value' },
      });
      const multi = seen.at(-1)!;
      const boundary = /boundary=(.+)$/.exec(String(multi.headers['content-type']))![1];
      expect(multi.body).toBe(
        `--${boundary}\r\nContent-Disposition: form-data; name="field"\r\n\r\nvalue\r\n--${boundary}--\r\n`,
      );
      await run({ method: 'POST', path: '/null', body: null });
      expect(seen.at(-1)!.body).toBe('null');
      await fails(
        run({
          method: 'POST',
          path: '/x',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: null,
        }),
        'INVALID_STATEMENT',
      );
    });

    it('rejects missing parameters, header injection and bodies on GET', async () => {
      await fails(run({ method: 'GET', path: '/x/{{missing}}' }), 'INVALID_STATEMENT');
      await fails(
        run({ method: 'GET', path: '/x', headers: { 'x-a': '{{v}}' } }, { v: 'a\r\nb: c' }),
        'INVALID_STATEMENT',
      );
      await fails(run({ method: 'GET', path: '/x', body: { a: 1 } }), 'INVALID_STATEMENT');
    });

    it('returns non-2xx answers as results and never retries', async () => {
      const before = seen.length;
      const result = await run({ method: 'POST', path: '/echo?status=503' });
      expect(result.payload.status).toBe(503);
      expect(seen.length - before).toBe(1);
    });
  });
});
