// An incremental records API on loopback for pipeline-run tests: `GET /orders?after=N` answers
// `{"data": [{id, name, region}...], "next_cursor": "M"}` with the records after N, streamed one
// at a time with a delay, so a test can cancel or kill a run while its source is still reading.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type RecordsRequest = {
  run: string | null;
  after: string | null;
  query: Record<string, string>;
  /** The response was written to its end (false: the client went away first). */
  completed: boolean;
  at: number;
};

export type RecordsApiPeer = {
  url: string;
  requests: RecordsRequest[];
  /** Bodies POSTed to /sink (an HTTP sink's deliveries). */
  received: string[];
  /** Records per response and the pause before each one; change between runs. */
  set(opts: { perResponse?: number; delayMs?: number }): void;
  /** Holds every `/orders` request before its answer until the returned function is called. */
  hold(): () => void;
  /** Resolves with the first request matching `pred` (already seen or future). */
  waitForRequest(pred: (r: RecordsRequest) => boolean, ms?: number): Promise<RecordsRequest>;
  close(): Promise<void>;
};

export async function startRecordsApi(
  opts: { perResponse?: number; delayMs?: number } = {},
): Promise<RecordsApiPeer> {
  let perResponse = opts.perResponse ?? 5;
  let delayMs = opts.delayMs ?? 0;
  const requests: RecordsRequest[] = [];
  const received: string[] = [];
  const waiters = new Set<() => void>();
  let gate: Promise<void> | null = null;
  const notify = () => {
    for (const w of waiters) w();
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://peer');
    if (url.pathname === '/sink' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('error', () => {}); // a canceled run hangs up mid-body
      req.on('end', () => {
        received.push(body);
        res.writeHead(204).end();
      });
      return;
    }
    if (url.pathname !== '/orders') {
      res.writeHead(404).end();
      return;
    }
    const query = Object.fromEntries(url.searchParams);
    const seen: RecordsRequest = {
      run: query.run ?? null,
      after: query.after ?? null,
      query,
      completed: false,
      at: Date.now(),
    };
    requests.push(seen);
    notify();
    if (gate) await gate;
    const after = Number(query.after) || 0;
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"data": [');
    for (let i = 1; i <= perResponse; i++) {
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      if (closed) return;
      const id = after + i;
      res.write(`${i > 1 ? ',' : ''}{"id": ${id}, "name": "order ${id}", "region": "r${id % 3}"}`);
    }
    res.end(`], "next_cursor": "${after + perResponse}"}`);
    seen.completed = true;
    notify();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    received,
    set(o) {
      if (o.perResponse !== undefined) perResponse = o.perResponse;
      if (o.delayMs !== undefined) delayMs = o.delayMs;
    },
    hold() {
      let release = () => {};
      gate = new Promise<void>((resolve) => {
        release = () => {
          gate = null;
          resolve();
        };
      });
      return release;
    },
    waitForRequest(pred, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = requests.find(pred);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching request within ${ms} ms: ${JSON.stringify(requests)}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
