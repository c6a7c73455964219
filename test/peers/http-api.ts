// A small HTTP API on loopback for HTTP-connector tests: health answers by status, a path
// that never answers, redirects, OpenAPI 3 (YAML) and Swagger 2 (JSON) documents, an invalid
// document and a slow one; every request is recorded.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type SeenRequest = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };

export type HttpApiPeer = {
  url: string;
  port: number;
  requests: SeenRequest[];
  close(): Promise<void>;
};

export const openApi3Yaml = `openapi: 3.0.3
info: {title: Shop API, version: "2.1.0"}
paths:
  /orders:
    get:
      operationId: listOrders
      summary: List orders
      tags: [orders]
      parameters:
        - {name: after, in: query, schema: {type: string}}
      responses: {'200': {description: ok}}
    post:
      operationId: createOrder
      responses: {'201': {description: created}}
  /orders/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string}}
    get:
      operationId: getOrder
      responses: {'200': {description: ok}}
`;

export const swagger2Json = JSON.stringify({
  swagger: '2.0',
  info: { title: 'Legacy API', version: '1.0' },
  paths: {
    '/things': {
      get: { operationId: 'listThings', responses: { 200: { description: 'ok' } } },
    },
  },
});

export async function startHttpApiPeer(): Promise<HttpApiPeer> {
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://peer');
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      switch (url.pathname) {
        case '/status':
          return json(Number(url.searchParams.get('code') ?? 200), { status: 'set' });
        case '/echo':
          // Reflects the request, credentials included: a hostile or careless remote.
          return json(200, { method: req.method, headers: req.headers, body });
        case '/hang':
          return; // never answers
        case '/redirect':
          res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
          return;
        case '/openapi.yaml':
          res.writeHead(200, { 'content-type': 'application/yaml' }).end(openApi3Yaml);
          return;
        case '/swagger.json':
          res.writeHead(200, { 'content-type': 'application/json' }).end(swagger2Json);
          return;
        case '/invalid.json':
          return json(200, { openapi: '3.0.0', info: { title: 'broken' }, paths: { '/a': { get: {} } } });
        case '/slow-openapi.yaml': {
          const delay = Number(url.searchParams.get('ms') ?? 2000);
          setTimeout(
            () => res.writeHead(200, { 'content-type': 'application/yaml' }).end(openApi3Yaml),
            delay,
          );
          return;
        }
        default:
          return json(200, { ok: true, method: req.method, path: url.pathname });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
