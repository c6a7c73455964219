import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { type JsonPayload, stepSchema } from '@sluice/engine';
import { defaultLimits } from '../types';
import { httpConfigSchema } from './config';

// The HTTP source's part of a worker's warm start (docs/operations.md#a-workers-warm-start): the
// made-up records of the transform exercise are served by a server of this process on
// 127.0.0.1 and read back through `readHttp` as a run's source step reads a JSON API, so a
// fresh worker's first run does not meet the HTTP client, its response parser and the records'
// scan for the first time. The server takes one request, for this exchange only; the address is
// this process's own, never a data source's.

/**
 * Serves `body` (a JSON array's bytes) from a server of this process on 127.0.0.1 and reads it
 * through the HTTP source. Resolves with the source's payload (the records as NDJSON bytes, as a
 * transform reads them) and `close`, which ends the server once the payload was read.
 */
export async function readServedJson(
  body: () => AsyncIterable<Uint8Array>,
): Promise<{ payload: JsonPayload; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url !== '/records') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    Readable.from(body()).pipe(res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  try {
    const { readHttp } = await import('./source');
    const port = (server.address() as AddressInfo).port;
    const conn = {
      config: httpConfigSchema.parse({ base_url: `http://127.0.0.1:${port}`, allow_private_hosts: true }),
      credentials: null,
    };
    const step = stepSchema.parse({
      slug: 'exercise',
      kind: 'source',
      data_source_ref: 'exercise',
      operation: { operation_type: 'http', method: 'GET', path: '/records' },
    });
    const signal = new AbortController().signal;
    const out = await readHttp(
      conn,
      {
        runSlug: 'exercise',
        step,
        signal,
        render: (value) => value,
        lowerBoundCursor: null,
        log: () => {},
        count: () => {},
      },
      { policy: { allowPrivate: true }, limits: defaultLimits, signal },
    );
    if (out.payload.kind !== 'json') throw new Error(`the served records came back as ${out.payload.kind}`);
    return { payload: out.payload, close };
  } catch (err) {
    await close();
    throw err;
  }
}
