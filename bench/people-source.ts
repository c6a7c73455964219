// The generated people of the HTTP JSON benches: a local HTTP server answering them as one JSON
// array, and the same records as CSV for `psql \copy`, the baseline.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

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
 * `GET /people` → `{"data": [...]}` with `count` records, from a server in a process of its own
 * (this file run as a script), as an API the pipeline reads is another host: in the bench's
 * process, the platform's own work (the execute it answers in-process, the CPU sampling) held the
 * source's connection for up to ~50 ms before it was accepted (docs/benchmarks.md). The body is
 * rendered once before the server listens (as an API with its data at hand would answer), so a
 * run measures Sluice reading it, not the server generating it; it is sent in 64 KiB writes.
 */
export async function startJsonServer(count: number): Promise<{ url: string; close(): Promise<void> }> {
  // process.execArgv carries tsx's loader, which runs this TypeScript file in the child.
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), String(count)],
    {
      // The IPC channel closes when the bench ends, however it ends: the server then exits too.
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /^listening (http:\/\/\S+)$/m.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`the people server exited (${code}) before listening`)));
  });
  // The server keeps no bench alive that ends without closing it (a failed check, say).
  child.stdout?.destroy();
  child.channel?.unref();
  child.unref();
  return {
    url,
    close: async () => {
      child.ref();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The server itself: renders the body, listens on loopback and prints its address. */
async function serve(count: number) {
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
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
  process.stdout.write(`listening http://127.0.0.1:${port}\n`);
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

if (process.argv[1] === fileURLToPath(import.meta.url)) await serve(Number(process.argv[2]));
