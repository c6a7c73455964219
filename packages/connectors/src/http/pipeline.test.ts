import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batches, bytesOf, chunksOf, collect, stepContext } from '../../../../test/support/step-context';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { httpConfigSchema, httpCredentialsSchema } from './config';
import { httpConnector } from './index';

// Pipeline read and write of the HTTP connector against a real local server on 127.0.0.1.

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer };

const PDF = Buffer.concat([
  Buffer.from('%PDF-1.4\n'),
  Buffer.from([0, 1, 2, 255, 254]),
  Buffer.from('\n%%EOF\n'),
]);
const SECRET = 'tok-very-secret-123';

describe('HTTP connector in pipelines', () => {
  let server: http.Server;
  let base: string;
  const seen: Seen[] = [];
  let secondFails = 0;
  const ctx: ConnectorContext = { policy: { allowPrivate: true }, limits: defaultLimits };
  const conn = (timeout_seconds = 5) => ({
    config: httpConfigSchema.parse({ base_url: `${base}/api`, allow_private_hosts: true, timeout_seconds }),
    credentials: httpCredentialsSchema.parse({ bearer_token: 'conn-token' }),
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
  const source = (operation: Record<string, unknown>, response?: Record<string, unknown>, cursor?: string) =>
    stepContext(
      {
        kind: 'source',
        data_source_ref: 'api',
        operation: { operation_type: 'http', ...operation },
        response,
      },
      { cursor, scope: { runtime: { secrets: { KEY: SECRET }, input: { region: 'eu/west' } } } },
    );
  const sink = (operation: Record<string, unknown>) =>
    stepContext(
      {
        kind: 'sink',
        data_source_ref: 'api',
        operation: { operation_type: 'http', method: 'POST', ...operation },
      },
      { scope: { runtime: { secrets: { KEY: SECRET } } } },
    );

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c) => parts.push(c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(parts) });
        const url = new URL(req.url!, 'http://x');
        const json = (status: number, value: unknown) =>
          res
            .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
            .end(JSON.stringify(value));
        switch (url.pathname) {
          case '/api/orders': {
            const after = Number(url.searchParams.get('after') || 0);
            const data = Array.from({ length: 3 }, (_, i) => ({
              id: after + i + 1,
              name: `o${after + i + 1}`,
            }));
            return json(200, {
              meta: { count: 3 },
              data,
              paging: { next: after >= 3 ? null : `${after + 3}` },
            });
          }
          case '/api/many':
            return json(
              200,
              Array.from({ length: 2500 }, (_, i) => ({ i })),
            );
          case '/api/one':
            return json(200, { id: 7, next: 'n7' });
          case '/api/report.csv':
            return res.writeHead(200, { 'content-type': 'text/csv' }).end('id,name\n1,"a, b"\n2,c\n');
          case '/api/report.pdf':
            return res
              .writeHead(200, {
                'content-type': 'application/pdf',
                'content-disposition': `attachment; filename="../q1 report.pdf"; filename*=UTF-8''Q1%20r%C3%A9port.pdf`,
              })
              .end(PDF);
          case '/api/fail':
            return json(500, { error: `boom ${req.headers['x-api-key']}` });
          case '/api/hang':
            return; // never answers
          case '/api/stall':
            res.writeHead(200, { 'content-type': 'application/json' });
            res.write('[{"a":1},');
            return; // the rest never comes
          case '/api/sink':
            return json(201, { ok: true });
          case '/api/second-fails':
            secondFails++;
            return json(secondFails === 2 ? 503 : 201, {});
          default:
            return json(404, {});
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

  describe('read', () => {
    it('renders the request and streams records_path records; cursor_path gives the next cursor', async () => {
      const step = source(
        {
          path: '/orders',
          query_params: { after: '{{runtime.incremental.lower_bound.cursor}}' },
          headers: { 'X-Api-Key': '{{runtime.secrets.KEY}}' },
        },
        { records_path: 'data', cursor_path: 'paging.next' },
        '0',
      );
      const out = await httpConnector.source.read(conn(), step, ctx);
      const last = seen.at(-1)!;
      expect(last.url).toBe('/api/orders?after=0');
      expect(last.headers['x-api-key']).toBe(SECRET);
      expect(last.headers.authorization).toBe('Bearer conn-token');
      expect(out.payload.kind).toBe('json');
      expect((await collect(out.payload)).items).toEqual([
        { id: 1, name: 'o1' },
        { id: 2, name: 'o2' },
        { id: 3, name: 'o3' },
      ]);
      expect(await out.nextCursor()).toBe('3');
      expect(step.counters.bytes_in).toBeGreaterThan(0);
      expect(JSON.stringify(step.lines)).not.toContain(SECRET);

      // The last page has no next cursor: the committed one stays.
      const end = await httpConnector.source.read(
        conn(),
        source(
          { path: '/orders', query_params: { after: '{{runtime.incremental.lower_bound.cursor}}' } },
          { records_path: 'data', cursor_path: 'paging.next' },
          '3',
        ),
        ctx,
      );
      await collect(end.payload);
      expect(await end.nextCursor()).toBe('3');
    });

    it('URL-encodes path templates and takes the body itself when there is no records_path', async () => {
      const out = await httpConnector.source
        .read(conn(), source({ path: '/x/{{runtime.input.region}}' }), ctx)
        .catch((e) => e);
      expect(out).toBeInstanceOf(ConnectorError);
      expect(seen.at(-1)!.url).toBe('/api/x/eu%2Fwest');
      const many = await httpConnector.source.read(conn(), source({ path: '/many' }), ctx);
      const got = await collect(many.payload);
      expect(got.sizes).toEqual([1000, 1000, 500]);
      expect(got.items[2499]).toEqual({ i: 2499 });
      expect(await many.nextCursor()).toBeNull();
      const one = await httpConnector.source.read(
        conn(),
        source({ path: '/one' }, { cursor_path: 'next' }),
        ctx,
      );
      expect((await collect(one.payload)).items).toEqual([{ id: 7, next: 'n7' }]);
      expect(await one.nextCursor()).toBe('n7');
    });

    it('streams CSV as a csv payload and other media types as files', async () => {
      const csv = await httpConnector.source.read(conn(), source({ path: '/report.csv' }), ctx);
      expect(csv.payload).toMatchObject({ kind: 'csv', delimiter: ',', header: true });
      expect((await bytesOf(csv.payload)).toString()).toBe('id,name\n1,"a, b"\n2,c\n');
      expect(await csv.nextCursor()).toBeNull();

      const pdf = await httpConnector.source.read(conn(), source({ path: '/report.pdf' }), ctx);
      expect(pdf.payload).toMatchObject({
        kind: 'file',
        mimeType: 'application/pdf',
        filename: 'Q1 réport.pdf',
      });
      expect((await bytesOf(pdf.payload)).equals(PDF)).toBe(true);

      // response.format overrides the media type.
      const forced = await httpConnector.source.read(
        conn(),
        source({ path: '/report.csv' }, { format: 'file' }),
        ctx,
      );
      expect(forced.payload).toMatchObject({ kind: 'file', mimeType: 'text/csv' });
      await bytesOf(forced.payload);
    });

    it('answers a non-2xx status with REMOTE_ERROR naming the status, never the body', async () => {
      const err = await fails(
        httpConnector.source.read(
          conn(),
          source({ path: '/fail', headers: { 'X-Api-Key': '{{runtime.secrets.KEY}}' } }),
          ctx,
        ),
        'REMOTE_ERROR',
      );
      expect(err.message).toMatch(/HTTP 500 \(application\/json\)/);
      expect(err.message).not.toContain(SECRET);
      await fails(
        httpConnector.source.read(
          conn(),
          source({ path: '/orders', body: '{{input}}', method: 'POST' }),
          ctx,
        ),
        'INVALID_STATEMENT',
      );
      await fails(
        httpConnector.source.read(conn(), source({ path: '/x', headers: { Authorization: 'x' } }), ctx),
        'INVALID_STATEMENT',
      );
    });

    it('times out waiting on the remote, for the headers and between body chunks', async () => {
      let started = Date.now();
      await fails(httpConnector.source.read(conn(1), source({ path: '/hang' }), ctx), 'TIMEOUT');
      expect(Date.now() - started).toBeLessThan(6000);
      const out = await httpConnector.source.read(conn(1), source({ path: '/stall' }), ctx);
      started = Date.now();
      const err = await collect(out.payload).catch((e) => e);
      expect(err).toBeInstanceOf(ConnectorError);
      expect(err.code).toBe('TIMEOUT');
      expect(Date.now() - started).toBeLessThan(6000);
      await expect(out.nextCursor()).rejects.toBeTruthy();
      // A slow consumer downstream is not the remote's fault: no timeout while we hold a chunk.
      const slow = await httpConnector.source.read(conn(1), source({ path: '/many' }), ctx);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await collect(slow.payload)).items).toHaveLength(2500);
    });

    it('bounds the response and goes through the egress guard', async () => {
      const small: ConnectorContext = { ...ctx, limits: { ...defaultLimits, maxResponseBytes: 1000 } };
      const many = await httpConnector.source.read(conn(), source({ path: '/many' }), small).catch((e) => e);
      const err = many instanceof ConnectorError ? many : await collect(many.payload).catch((e) => e);
      expect(err.code).toBe('RESPONSE_TOO_LARGE');
      const closed: ConnectorContext = { ...ctx, policy: { allowPrivate: false } };
      await fails(
        httpConnector.source.read(conn(), source({ path: '/orders' }), closed),
        'PRIVATE_HOST_BLOCKED',
      );
    });
  });

  describe('write', () => {
    const rows: Payload = {
      kind: 'rows',
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'note', type: 'text' },
        { name: 'at', type: 'timestamp' },
      ],
      batches: batches<unknown[]>(
        [
          [1, 'a "quoted"\nline', new Date('2024-01-02T03:04:05Z')],
          [2, null, null],
        ],
        [[3, 'ü', null]],
      ),
    };

    it('forwards rows as a streamed JSON array', async () => {
      const step = sink({
        path: '/sink',
        body: '{{input}}',
        headers: { 'X-Api-Key': '{{runtime.secrets.KEY}}' },
      });
      const result = await httpConnector.sink.write(conn(), rows, step, ctx);
      const last = seen.at(-1)!;
      expect(last.method).toBe('POST');
      expect(last.headers['content-type']).toBe('application/json');
      expect(last.headers['transfer-encoding']).toBe('chunked');
      expect(JSON.parse(last.body.toString())).toEqual([
        { id: 1, note: 'a "quoted"\nline', at: '2024-01-02T03:04:05.000Z' },
        { id: 2, note: null, at: null },
        { id: 3, note: 'ü', at: null },
      ]);
      expect(result).toEqual({ rows: 3, bytes: last.body.length });
    });

    it('splits the records into requests of batch_size, as JSON arrays or NDJSON', async () => {
      const records = (): Payload => ({
        kind: 'json',
        batches: batches<unknown>([{ n: 1 }, { n: 2 }, { n: 3 }], [{ n: 4 }, { n: 5 }]),
      });
      const before = seen.length;
      const result = await httpConnector.sink.write(
        conn(),
        records(),
        sink({ path: '/sink', body: '{{input}}', batch_size: 2 }),
        ctx,
      );
      const sent = seen.slice(before);
      expect(sent.map((r) => JSON.parse(r.body.toString()))).toEqual([
        [{ n: 1 }, { n: 2 }],
        [{ n: 3 }, { n: 4 }],
        [{ n: 5 }],
      ]);
      expect(sent.every((r) => r.headers['content-type'] === 'application/json')).toBe(true);
      expect(result).toEqual({ rows: 5, bytes: sent.reduce((n, r) => n + r.body.length, 0) });
      await httpConnector.sink.write(
        conn(),
        records(),
        sink({
          path: '/sink',
          body: '{{input}}',
          batch_size: 4,
          headers: { 'Content-Type': 'application/x-ndjson' },
        }),
        ctx,
      );
      expect(seen.slice(-2).map((r) => r.body.toString())).toEqual([
        '{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n',
        '{"n":5}\n',
      ]);
    });

    it('stops at the first refused batch and says how much was accepted', async () => {
      const err = await fails(
        httpConnector.sink.write(
          conn(),
          { kind: 'json', batches: batches<unknown>([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }]) },
          sink({ path: '/second-fails', body: '{{input}}', batch_size: 2 }),
          ctx,
        ),
        'REMOTE_ERROR',
      );
      expect(err.message).toMatch(
        /^batch 2: .* answered HTTP 503 .*; 2 records in 1 earlier batches were accepted$/,
      );
      expect(secondFails).toBe(2);
      await fails(
        httpConnector.sink.write(
          conn(),
          { kind: 'json', batches: batches<unknown>([{ n: 1 }]) },
          sink({ path: '/sink', body: '{{input}}', batch_size: 2, headers: { 'Content-Type': 'text/csv' } }),
          ctx,
        ),
        'INVALID_STATEMENT',
      );
      await fails(
        httpConnector.sink.write(
          conn(),
          { kind: 'json', batches: batches<unknown>([{ n: 1 }]) },
          sink({ path: '/sink', body: { fixed: true }, batch_size: 2 }),
          ctx,
        ),
        'INVALID_STATEMENT',
      );
    });

    it('forwards JSON records as NDJSON and CSV as text/csv when asked', async () => {
      await httpConnector.sink.write(
        conn(),
        { kind: 'json', batches: batches<unknown>([{ a: 1 }, [2]], [{ b: null }]) },
        sink({ path: '/sink', body: '{{input}}', headers: { 'Content-Type': 'application/x-ndjson' } }),
        ctx,
      );
      expect(seen.at(-1)!.body.toString()).toBe('{"a":1}\n[2]\n{"b":null}\n');
      const csv = 'id,name\n1,"x\ny"\n2,z\n';
      const result = await httpConnector.sink.write(
        conn(),
        { kind: 'csv', delimiter: ',', header: true, chunks: chunksOf(csv.slice(0, 9), csv.slice(9)) },
        sink({ path: '/sink', body: '{{input}}', method: 'PUT' }),
        ctx,
      );
      expect(seen.at(-1)!.headers['content-type']).toBe('text/csv');
      expect(seen.at(-1)!.body.toString()).toBe(csv);
      expect(result.rows).toBe(2);
    });

    it('sends files with their media type unless a header overrides it', async () => {
      const file = (): Payload => ({
        kind: 'file',
        mimeType: 'application/pdf',
        filename: 'r.pdf',
        chunks: chunksOf(PDF),
      });
      await httpConnector.sink.write(conn(), file(), sink({ path: '/sink', body: '{{input}}' }), ctx);
      expect(seen.at(-1)!.headers['content-type']).toBe('application/pdf');
      expect(seen.at(-1)!.body.equals(PDF)).toBe(true);
      await httpConnector.sink.write(
        conn(),
        file(),
        sink({ path: '/sink', body: '{{input}}', headers: { 'Content-Type': 'application/octet-stream' } }),
        ctx,
      );
      expect(seen.at(-1)!.headers['content-type']).toBe('application/octet-stream');
    });

    it('sends forms URL-encoded or multipart with our boundary', async () => {
      await httpConnector.sink.write(
        conn(),
        {
          kind: 'form',
          encoding: 'urlencoded',
          fields: [
            { name: 'a', value: '1&2' },
            { name: 'b', value: 'x y' },
          ],
        },
        sink({ path: '/sink', body: '{{input}}' }),
        ctx,
      );
      expect(seen.at(-1)!.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(seen.at(-1)!.body.toString()).toBe('a=1%262&b=x+y');

      await httpConnector.sink.write(
        conn(),
        {
          kind: 'form',
          encoding: 'multipart',
          fields: [
            { name: 'title', value: 'Q1' },
            {
              name: 'doc',
              file: { kind: 'file', mimeType: 'application/pdf', filename: 'q"1.pdf', chunks: chunksOf(PDF) },
            },
          ],
        },
        sink({ path: '/sink', body: '{{input}}' }),
        ctx,
      );
      const last = seen.at(-1)!;
      const boundary = /^multipart\/form-data; boundary=(sluice-[0-9a-f]{32})$/.exec(
        last.headers['content-type']!,
      )![1];
      const expected = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nQ1\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="q%221.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
        ),
        PDF,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      expect(last.body.equals(expected)).toBe(true);
      // A file cannot travel URL-encoded.
      await fails(
        httpConnector.sink.write(
          conn(),
          {
            kind: 'form',
            encoding: 'urlencoded',
            fields: [{ name: 'f', file: { kind: 'file', mimeType: 'text/plain', chunks: chunksOf('x') } }],
          },
          sink({ path: '/sink', body: '{{input}}' }),
          ctx,
        ),
        'INVALID_STATEMENT',
      );
    });

    it('answers a non-2xx status with REMOTE_ERROR and keeps the upstream error as it is', async () => {
      const before = seen.filter((s) => s.url === '/api/fail').length;
      const err = await fails(
        httpConnector.sink.write(
          conn(),
          { kind: 'json', batches: batches([{ a: 1 }]) },
          sink({ path: '/fail', body: '{{input}}', headers: { 'X-Api-Key': '{{runtime.secrets.KEY}}' } }),
          ctx,
        ),
        'REMOTE_ERROR',
      );
      expect(err.message).toContain('HTTP 500');
      expect(err.message).not.toContain(SECRET);
      // One attempt only: a POST is never replayed.
      expect(seen.filter((s) => s.url === '/api/fail').length).toBe(before + 1);

      async function* broken() {
        yield [{ a: 1 }];
        throw new ConnectorError('QUERY_FAILED', 'upstream broke');
      }
      const up = await fails(
        httpConnector.sink.write(
          conn(),
          { kind: 'json', batches: broken() },
          sink({ path: '/sink', body: '{{input}}' }),
          ctx,
        ),
        'QUERY_FAILED',
      );
      expect(up.message).toBe('upstream broke');
      await fails(
        httpConnector.sink.write(conn(), rows, sink({ path: '/sink', body: '{{input}}' }), {
          ...ctx,
          readOnly: true,
        }),
        'PERMISSION_DENIED',
      );
    });
  });
});
