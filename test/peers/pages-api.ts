// A paged records API on loopback for pipeline acceptance suites, over a dataset the test
// controls (unlike records-api.ts, whose records never run out):
//   GET /orders?after=<id>  → {"data": [...up to pageSize records with id > after], "next_cursor": "<last id>" | null}
//   GET /orders.csv         → every record as text/csv
//   GET /items?run=<slug>   → {"data": [itemsPerRun records {run, i, label}]}, one per request
// Records stream one at a time (optionally with a pause), so a run can be canceled or a sink
// stopped while the source is still reading. With `token` set, every request must carry it in
// `x-api-token` (else 401). Every request is recorded, headers included.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type PageRecord = { id: number; name: string; qty: number; price: number; region: string };

export type PagesRequest = {
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  /** The response was written to its end (false: the client went away first). */
  completed: boolean;
  at: number;
};

export type PagesApiPeer = {
  url: string;
  /** The dataset, by id; tests add to it between runs. */
  records: PageRecord[];
  requests: PagesRequest[];
  set(opts: { pageSize?: number; delayMs?: number; token?: string | null; itemsPerRun?: number }): void;
  waitForRequest(pred: (r: PagesRequest) => boolean, ms?: number): Promise<PagesRequest>;
  close(): Promise<void>;
};

export const pageRecord = (id: number): PageRecord => ({
  id,
  name: `order ${id}`,
  qty: (id % 7) + 1,
  price: Number(((id % 11) * 1.25 + 0.5).toFixed(2)),
  region: ['north', 'south', 'east'][id % 3],
});

const csvField = (v: unknown) => {
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export async function startPagesApi(
  opts: { pageSize?: number; delayMs?: number; itemsPerRun?: number } = {},
): Promise<PagesApiPeer> {
  let pageSize = opts.pageSize ?? 4;
  let delayMs = opts.delayMs ?? 0;
  let itemsPerRun = opts.itemsPerRun ?? 3;
  let token: string | null = null;
  const records: PageRecord[] = [];
  const requests: PagesRequest[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of waiters) w();
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://peer');
    const seen: PagesRequest = {
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      completed: false,
      at: Date.now(),
    };
    requests.push(seen);
    notify();
    if (token !== null && req.headers['x-api-token'] !== token) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    const pause = () => (delayMs ? new Promise((r) => setTimeout(r, delayMs)) : Promise.resolve());
    const done = () => {
      seen.completed = true;
      notify();
    };

    if (url.pathname === '/orders') {
      const after = Number(url.searchParams.get('after') || 0);
      const page = records
        .filter((r) => r.id > after)
        .sort((a, b) => a.id - b.id)
        .slice(0, pageSize);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data": [');
      for (let i = 0; i < page.length; i++) {
        await pause();
        if (closed) return;
        res.write(`${i > 0 ? ',' : ''}${JSON.stringify(page[i])}`);
      }
      const next = page.length > 0 ? JSON.stringify(String(page[page.length - 1].id)) : 'null';
      res.end(`], "next_cursor": ${next}}`);
      return done();
    }
    if (url.pathname === '/orders.csv') {
      res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' });
      res.write('id,name,qty,price,region\r\n');
      for (const r of [...records].sort((a, b) => a.id - b.id)) {
        await pause();
        if (closed) return;
        res.write(`${[r.id, r.name, r.qty, r.price, r.region].map(csvField).join(',')}\r\n`);
      }
      res.end();
      return done();
    }
    if (url.pathname === '/items') {
      const run = url.searchParams.get('run') ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data": [');
      for (let i = 1; i <= itemsPerRun; i++) {
        await pause();
        if (closed) return;
        res.write(`${i > 1 ? ',' : ''}${JSON.stringify({ run, i, label: `${run}/${i}` })}`);
      }
      res.end(']}');
      return done();
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    records,
    requests,
    set(o) {
      if (o.pageSize !== undefined) pageSize = o.pageSize;
      if (o.delayMs !== undefined) delayMs = o.delayMs;
      if (o.itemsPerRun !== undefined) itemsPerRun = o.itemsPerRun;
      if (o.token !== undefined) token = o.token;
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
          reject(new Error(`no matching request within ${ms} ms`));
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
