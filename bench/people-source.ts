// The generated people of the HTTP JSON benches: a local HTTP server answering them as one JSON
// array, and the same records as CSV for `psql \copy`, the baseline.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One generated person: the same values for the HTTP server and the CSV baseline. */
export function person(i: number) {
  return {
    id: i,
    name: `Person ${i}`,
    email: `User.${i}@Example.COM`,
    amount: ((i * 7919) % 1_000_000) / 100,
    created_at: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    active: i % 3 !== 0,
    country: ['DE', 'FR', 'US', 'JP', null][i % 5],
  };
}

/**
 * `GET /people` → `{"data": [...]}` with `count` records. The body is rendered once before the
 * server listens (as an API with its data at hand would answer), so a run measures Sluice
 * reading it, not the bench process generating it; it is sent in 64 KiB writes.
 */
export async function startJsonServer(count: number): Promise<{ url: string; close(): Promise<void> }> {
  const parts: Buffer[] = [Buffer.from('{"data":[')];
  for (let i = 1; i <= count; i += 1000) {
    const texts: string[] = [];
    for (let j = i; j <= Math.min(count, i + 999); j++) texts.push(JSON.stringify(person(j)));
    parts.push(Buffer.from((i === 1 ? '' : ',') + texts.join(',')));
  }
  parts.push(Buffer.from(']}'));
  const body = Buffer.concat(parts);
  const server = http.createServer((req, res) => {
    if (req.url !== '/people') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    let at = 0;
    const pump = () => {
      while (at < body.length) {
        const piece = body.subarray(at, at + 65536);
        at += piece.length;
        if (!res.write(piece)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The same records as CSV (lower-cased email, as the transform writes them) for `\copy`. */
export async function writePeopleCsv(file: string, count: number) {
  const out = fs.createWriteStream(file);
  const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
  for (let i = 1; i <= count; i += 1000) {
    let text = '';
    for (let j = i; j < Math.min(count + 1, i + 1000); j++) {
      const p = person(j);
      text += `${p.id},${q(p.name)},${q(p.email.toLowerCase())},${p.amount},${p.created_at},${p.active},${p.country ?? ''}\n`;
    }
    if (!out.write(text)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => {
    out.on('error', reject);
    out.end(() => resolve());
  });
}
