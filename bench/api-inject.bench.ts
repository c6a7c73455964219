/**
 * CPU per request of the authenticated events page (`GET /organizations/acme/events?limit=20`)
 * through `app.inject`: the API's own work (hooks, auth, page query, serialization, request
 * line) without sockets, whose cost swings with the machine's load. Run it on two checkouts one
 * after the other to compare them: `npx tsx bench/api-inject.bench.ts`. PostgreSQL server: a
 * scratch database on SLUICE_BENCH_PG_URL, else SLUICE_TEST_PG_URL, else the local default.
 */
import { Writable } from 'node:stream';
import pg from 'pg';
import { buildApp } from '../packages/server/src/app';
import { events, organizations } from '../packages/server/src/db/schema/index';
import { parseConfig } from '../packages/server/src/env';
import { randomSlug } from '../packages/server/src/http/fields';
import { bootstrap } from '../packages/server/src/modules/system/bootstrap';
import { openRuntime } from '../packages/server/src/runtime';

const ADMIN_URL =
  process.env.SLUICE_BENCH_PG_URL ??
  process.env.SLUICE_TEST_PG_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';
const BATCH = 2000;
const CONCURRENCY = 8;

const name = `sluice_inject_${process.pid}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`create database ${name}`);
const dbUrl = new URL(ADMIN_URL);
dbUrl.pathname = `/${name}`;
try {
  // The shipped log level (info), written to a sink; SLUICE_CHECK_RESPONSES off, as shipped.
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const config = parseConfig({
    SLUICE_LOG_LEVEL: 'info',
    DATABASE_URL: dbUrl.toString(),
    SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
  });
  const rt = await openRuntime(config, { logStream: sink, supervise: false });
  const { api_key } = await bootstrap(rt.deps, { orgSlug: 'acme', email: 'bench@example.com' });
  const [org] = await rt.deps.db.select().from(organizations);
  const now = Date.now();
  await rt.deps.db.insert(events).values(
    Array.from({ length: 500 }, (_, j) => ({
      organizationId: org.id,
      slug: randomSlug('ev', 20),
      eventClass: 'activity' as const,
      actorType: 'api_key' as const,
      actorSlug: 'bootstrap',
      entityType: 'api_key' as const,
      entitySlug: `key-${j % 50}`,
      action: 'update' as const,
      requestId: null,
      occurredAt: new Date(now - j * 1000),
      metadata: { fields: ['name'] },
    })),
  );
  const app = await buildApp(rt.deps);
  await app.ready();
  const request = () =>
    app.inject({
      method: 'GET',
      url: '/organizations/acme/events?limit=20',
      headers: { authorization: `Bearer ${api_key}` },
    });
  const batch = async () => {
    for (let i = 0; i < BATCH; i += CONCURRENCY)
      await Promise.all(Array.from({ length: CONCURRENCY }, request));
  };
  const probe = await request();
  if (probe.statusCode !== 200 || probe.json().events.length !== 20) throw new Error(`probe: ${probe.body}`);
  await batch(); // warm-up
  const figures: number[] = [];
  for (let r = 0; r < 5; r++) {
    const before = process.cpuUsage();
    await batch();
    const d = process.cpuUsage(before);
    figures.push(Math.round((d.user + d.system) / BATCH));
  }
  const median = [...figures].sort((a, b) => a - b)[2];
  console.log(
    `CPU µs per request (app.inject, 5 × ${BATCH}, ${CONCURRENCY} at a time): ${figures.join(' ')}; median ${median}; load average ${(await import('node:os')).loadavg()[0].toFixed(1)}`,
  );
  await app.close();
  await rt.close();
} finally {
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
