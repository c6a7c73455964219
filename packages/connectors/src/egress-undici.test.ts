import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// egress.ts loads only the parts of undici that outbound HTTP uses (docs/benchmarks.md, Memory).
// The test files share one module cache (vitest.config.ts: isolate false) and some import undici
// whole, so this runs in a process of its own: one request each way through the guarded agent,
// then the undici files that process loaded.
const egress = fileURLToPath(new URL('./egress.ts', import.meta.url));
const script = `
import http from 'node:http';
import { createRequire } from 'node:module';
const { guardedDispatcher, undici } = await import(${JSON.stringify(egress)});
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => res.end(JSON.stringify({ method: req.method, url: req.url, body })));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = 'http://127.0.0.1:' + server.address().port;
const dispatcher = guardedDispatcher({ allowPrivate: true });
const answers = [];
for (const [url, opts] of [
  [base + '/a/b?x=1&y=2', {}],
  [new URL('/put', base), { body: 'payload' }],
  [base + '/post', { method: 'POST', body: 'p' }],
]) {
  const res = await undici().request(url, { ...opts, dispatcher });
  answers.push({ status: res.statusCode, ...(await res.body.json()) });
}
let refused = '';
try {
  await undici().request('ftp://127.0.0.1/', { dispatcher });
} catch (err) {
  refused = err.code;
}
await dispatcher.close();
server.close();
const loaded = Object.keys(createRequire(import.meta.url).cache)
  .map((f) => f.split('/node_modules/undici/')[1])
  .filter(Boolean);
console.log(JSON.stringify({ answers, refused, loaded }));
`;

describe('undici as outbound HTTP loads it', () => {
  it('sends as undici.request does, and loads neither its index nor fetch', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { timeout: 60_000 },
    );
    const { answers, refused, loaded } = JSON.parse(stdout);
    expect(answers).toEqual([
      { status: 200, method: 'GET', url: '/a/b?x=1&y=2', body: '' },
      { status: 200, method: 'PUT', url: '/put', body: 'payload' },
      { status: 200, method: 'POST', url: '/post', body: 'p' },
    ]);
    expect(refused).toBe('UND_ERR_INVALID_ARG');
    expect(loaded).toContain('lib/dispatcher/agent.js');
    expect(loaded).not.toContain('index.js');
    expect(loaded.filter((f: string) => f.startsWith('lib/web/'))).toEqual([]);
  });
});
