// `npm run bench:eventloop`: how long the server's event loop is held while hostile JSON bodies
// arrive (docs/operations.md, "Request bodies"), against the same server under normal requests
// only, in the same run. Not a test: it prints figures; docs/benchmarks.md records them.
//
// Both hosts (API and app) run in this process, as `sluice serve` runs them, on a scratch
// database of the PostgreSQL server (BENCH_STORE=pglite: the embedded store, whose queries run on
// this same event loop and so raise the baseline itself).
// `perf_hooks.monitorEventLoopDelay` samples the loop every 10 ms; each phase resets it and runs
// BENCH_DURATION_SECONDS (default 5): first only the normal mix (authenticated reads, project
// creates, /healthz), then the same mix while a second client sends the hostile bodies (depth
// 100,000, 1 MiB of one string, 100k keys, 100k array elements, a repeated key, invalid UTF-8) to
// a public and a private route of each host, one after another. The clients run in this process
// too: their own work is small and the same in both phases.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import pg from 'pg';
import { buildApp } from '../packages/server/src/app';
import { buildAppHost } from '../packages/server/src/app-host/app-host';
import { parseConfig } from '../packages/server/src/env';
import { setUserPassword } from '../packages/server/src/modules/identity/set-password';
import { bootstrap } from '../packages/server/src/modules/system/bootstrap';
import { openRuntime } from '../packages/server/src/runtime';

const DURATION_MS = Number(process.env.BENCH_DURATION_SECONDS ?? 5) * 1000;
const NORMAL_CLIENTS = 4;
const EMAIL = 'bench@example.com';
const PASSWORD = 'bench-eventloop-password-1';
const MiB = 1024 * 1024;
const ADMIN_URL =
  process.env.SLUICE_BENCH_PG_URL ??
  process.env.SLUICE_TEST_PG_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';
const PGLITE = process.env.BENCH_STORE === 'pglite';

const hostileBodies: [string, Buffer][] = [
  ['depth 100,000', Buffer.from(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`)],
  ['1 MiB string', Buffer.from(`{"name":"${'x'.repeat(MiB - 11)}"}`)],
  [
    '100k keys',
    Buffer.from(`{${Array.from({ length: 100_000 }, (_, i) => `"${i.toString(36)}":1`).join(',')}}`),
  ],
  ['100k elements', Buffer.from(`{"name":"n","list":[${Array(100_000).fill(0).join(',')}]}`)],
  ['repeated key', Buffer.from('{"name":"a","name":"b"}')],
  [
    'invalid UTF-8',
    Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xc3, 0x28]), Buffer.from('b"}')]),
  ],
];

const ms = (ns: number) => (ns / 1e6).toFixed(1).padStart(7);

type Phase = {
  label: string;
  p50: number;
  p99: number;
  max: number;
  normal: number;
  hostile: Record<number, number>;
};

async function admin(text: string) {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-eventloop-'));
  const database = `sluice_bench_eventloop_${process.pid}`;
  const store: Record<string, string> = { SLUICE_DATA_DIR: dataDir };
  if (!PGLITE) {
    await admin(`create database ${database}`);
    const u = new URL(ADMIN_URL);
    u.pathname = `/${database}`;
    store.DATABASE_URL = u.toString();
  }
  const config = parseConfig({
    SLUICE_LOG_LEVEL: 'info',
    SLUICE_API_ADDR: '127.0.0.1:0',
    ...store,
    SLUICE_MASTER_KEY: randomBytes(32).toString('base64'),
    // The default limits would turn the run into a 429 benchmark.
    SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
    SLUICE_RATE_LIMIT_PUBLIC: '1000000000',
  });
  const rt = await openRuntime(config, {
    logStream: new Writable({ write: (_c, _e, cb) => cb() }),
    supervise: false,
  });
  const api = await buildApp(rt.deps);
  const appHost = await buildAppHost(rt.deps);
  try {
    const { api_key: token } = await bootstrap(rt.deps, { orgSlug: 'acme', email: EMAIL });
    await setUserPassword(rt.deps, { email: EMAIL, password: PASSWORD });
    const apiUrl = await api.listen({ host: '127.0.0.1', port: 0 });
    const appUrl = await appHost.listen({ host: '127.0.0.1', port: 0 });
    const signIn = await fetch(`${appUrl}/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    if (signIn.status !== 201) throw new Error(`sign-in failed: ${signIn.status}`);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const csrf = ((await signIn.json()) as { csrf_token: string }).csrf_token;
    const bearer = { authorization: `Bearer ${token}` };
    const session = { cookie, 'x-csrf-token': csrf, 'sec-fetch-site': 'same-origin' };
    const hostileRoutes: [string, Record<string, string>][] = [
      [`${apiUrl}/users`, {}],
      [`${apiUrl}/organizations/acme/projects`, bearer],
      [`${appUrl}/session`, { 'sec-fetch-site': 'same-origin' }],
      [`${appUrl}/api/organizations/acme/projects`, session],
    ];

    let created = 0;
    const normalRequest = async (i: number) => {
      switch (i % 4) {
        case 0:
          return fetch(`${apiUrl}/organizations/acme/projects`, { headers: bearer });
        case 1:
          return fetch(`${appUrl}/api/organizations/acme/events?limit=20`, { headers: { cookie } });
        case 2:
          return fetch(`${apiUrl}/organizations/acme/projects`, {
            method: 'POST',
            headers: { ...bearer, 'content-type': 'application/json' },
            body: JSON.stringify({
              slug: `p-${++created}`,
              name: `Project ${created}`,
              description: 'x'.repeat(500),
            }),
          });
        default:
          return fetch(`${apiUrl}/healthz`);
      }
    };

    const phase = async (label: string, withHostile: boolean): Promise<Phase> => {
      const until = Date.now() + DURATION_MS;
      let normal = 0;
      const hostile: Record<number, number> = {};
      const h = monitorEventLoopDelay({ resolution: 10 });
      h.enable();
      const clients = Array.from({ length: NORMAL_CLIENTS }, async (_, c) => {
        for (let i = c; Date.now() < until; i += NORMAL_CLIENTS) {
          const res = await normalRequest(i);
          await res.arrayBuffer();
          if (res.status >= 500) throw new Error(`normal request answered ${res.status}`);
          normal++;
        }
      });
      const attacker = (async () => {
        for (let i = 0; withHostile && Date.now() < until; i++) {
          const [url, headers] = hostileRoutes[i % hostileRoutes.length]!;
          const body = hostileBodies[Math.floor(i / hostileRoutes.length) % hostileBodies.length]![1];
          const res = await fetch(url, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body,
          });
          await res.arrayBuffer();
          hostile[res.status] = (hostile[res.status] ?? 0) + 1;
        }
      })();
      await Promise.all([...clients, attacker]);
      h.disable();
      return { label, p50: h.percentile(50), p99: h.percentile(99), max: h.max, normal, hostile };
    };

    await phase('warm-up', true);
    const baseline = await phase('normal requests only', false);
    const attacked = await phase('normal + hostile bodies', true);
    console.log(
      `event-loop delay, ${PGLITE ? 'PGlite' : 'PostgreSQL server'}, ${DURATION_MS / 1000} s per phase, ` +
        `${NORMAL_CLIENTS} normal clients, load ${os.loadavg()[0].toFixed(1)}`,
    );
    console.log(`${'phase'.padEnd(26)}     p50 ms   p99 ms   max ms   normal req   hostile answers`);
    for (const p of [baseline, attacked]) {
      const statuses = Object.entries(p.hostile)
        .map(([s, n]) => `${n}×${s}`)
        .join(' ');
      console.log(
        `${p.label.padEnd(26)} ${ms(p.p50)}  ${ms(p.p99)}  ${ms(p.max)}   ${String(p.normal).padStart(10)}   ${statuses || '—'}`,
      );
    }
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : 'n/a');
    console.log(
      `ratio hostile/normal: p50 ${ratio(attacked.p50, baseline.p50)}, p99 ${ratio(attacked.p99, baseline.p99)}, max ${ratio(attacked.max, baseline.max)}`,
    );
    const non4xx = Object.keys(attacked.hostile).filter((s) => Number(s) < 400 || Number(s) >= 500);
    if (non4xx.length > 0) console.log(`!! hostile bodies answered outside 4xx: ${non4xx.join(', ')}`);
  } finally {
    await appHost.close();
    await api.close();
    await rt.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (!PGLITE) await admin(`drop database if exists ${database} with (force)`);
  }
}

await main();
