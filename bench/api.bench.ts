// `npm run bench:api`: throughput and p99 latency of an authenticated event list against a bare
// Fastify route, on the embedded store (PGlite) and on a PostgreSQL server, where it is also
// measured against a same-work ceiling (the same two prepared queries behind a bare route).
// Not a test: it prints figures; docs/benchmarks.md records them and the target.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import pg from 'pg';
import { buildApp } from '../packages/server/src/app';
import { events, organizations } from '../packages/server/src/db/schema/index';
import { parseConfig } from '../packages/server/src/env';
import { randomSlug } from '../packages/server/src/http/fields';
import { hashToken } from '../packages/server/src/http/tokens';
import { bootstrap } from '../packages/server/src/modules/system/bootstrap';
import { openRuntime } from '../packages/server/src/runtime';

const DURATION = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const CONNECTIONS = 32;
// `BENCH_ONLY=postgres` skips the bare route and PGlite (for profiling the PostgreSQL path alone).
const ONLY_POSTGRES = process.env.BENCH_ONLY === 'postgres';
/** Sluice runs on PostgreSQL, each between two ceiling runs. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CEILING_LABEL = 'same-work ceiling (2 prepared pg queries)';
const EVENTS = 10_000;
const ADMIN_URL =
  process.env.SLUICE_BENCH_PG_URL ??
  process.env.SLUICE_TEST_PG_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

type Figures = {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU time of this process (server and load generator thread) per request, in µs. */
  cpuUs: number;
  /** One-minute load average at the end of the run. */
  load: number;
};

async function load(label: string, url: string, token?: string): Promise<Figures> {
  const opts = {
    url,
    connections: CONNECTIONS,
    headers: (token ? { authorization: `Bearer ${token}` } : {}) as Record<string, string>,
    // The load generator runs in its own thread so it does not share the server's event loop.
    workers: 1,
  };
  await autocannon({ ...opts, duration: 2 }); // warm-up: JIT, pool connections, caches
  const cpu = process.cpuUsage();
  const r = await autocannon({ ...opts, duration: DURATION });
  const used = process.cpuUsage(cpu);
  const f = {
    label,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    // Completed requests (autocannon puts the total on the requests histogram; its types omit it).
    cpuUs: (used.user + used.system) / Math.max(1, (r.requests as unknown as { total: number }).total),
    load: os.loadavg()[0],
  };
  console.log(
    `${label.padEnd(34)} ${f.rps.toFixed(0).padStart(7)} req/s  p50 ${f.p50} ms  p99 ${f.p99} ms  ` +
      `cpu ${f.cpuUs.toFixed(0)} µs/req  load ${f.load.toFixed(1)}` +
      (f.non2xx || f.errors ? `  (non-2xx ${f.non2xx}, errors ${f.errors})` : ''),
  );
  return f;
}

/** A bare Fastify route with a small JSON answer: the ceiling of this machine and Node. */
async function bare(): Promise<Figures> {
  const app = Fastify({ logger: false });
  app.get('/bare', async () => ({ status: 'ok', items: [1, 2, 3] }));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    return await load('bare Fastify route', `${url}/bare`);
  } finally {
    await app.close();
  }
}

/** 10,000 activity events spread over the last 20 days, plus a second tenant's noise. */
async function seed(db: any, organizationId: string) {
  const [other] = await db.insert(organizations).values({ slug: 'noise', name: 'Noise' }).returning();
  const now = Date.now();
  for (let i = 0; i < EVENTS; i += 1000) {
    const rows = [];
    for (let j = i; j < Math.min(i + 1000, EVENTS); j++) {
      const base = {
        slug: randomSlug('ev', 20),
        eventClass: j % 10 === 0 ? 'security_audit' : 'activity',
        actorType: 'api_key',
        actorSlug: 'bootstrap',
        entityType: 'api_key',
        entitySlug: `key-${j % 50}`,
        action: 'update',
        requestId: null,
        occurredAt: new Date(now - (j * 20 * 86400_000) / EVENTS),
        metadata: { fields: ['name'] },
      };
      rows.push(
        { ...base, organizationId },
        { ...base, slug: randomSlug('ev', 20), organizationId: other.id },
      );
    }
    await db.insert(events).values(rows);
  }
}

/**
 * The same-work ceiling: a bare Fastify route on a pool of the same size running the two
 * prepared queries an authenticated events page needs (API key with its organization by token
 * hash, then the page), answering the rows as JSON. No hooks, no logging, no validation.
 */
async function startCeiling(databaseUrl: string, poolSize: number) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  const app = Fastify({ logger: false });
  app.get('/ceiling', async (req, reply) => {
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const key = await pool.query({
      name: 'ceiling_key',
      text: `select k.id, k.revoked_at, k.expires_at, o.id as org_id, o.slug as org_slug
               from api_keys k join organizations o on o.id = k.organization_id
              where k.token_hash = $1 limit 1`,
      values: [hashToken(bearer)],
    });
    const row = key.rows[0];
    if (!row || row.revoked_at) return reply.code(401).send({ error: 'unauthorized' });
    const page = await pool.query({
      name: 'ceiling_page',
      text: `select * from events where organization_id = $1 and event_class = 'activity'
              order by occurred_at desc, slug desc limit 21`,
      values: [row.org_id],
    });
    return { events: page.rows.slice(0, 20), next_cursor: page.rows.length > 20 ? 'more' : null };
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `${url}/ceiling`,
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

type PgRounds = { ceilings: Figures[]; runs: Figures[] };

async function sluice(label: string, env: Record<string, string>): Promise<Figures[] | PgRounds> {
  // The shipped log level (info), written to a sink: the serialization cost is real.
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const config = parseConfig({
    SLUICE_LOG_LEVEL: 'info',
    SLUICE_API_ADDR: '127.0.0.1:0',
    // The default 600 per minute per token would turn the run into a 429 benchmark.
    SLUICE_RATE_LIMIT_PER_TOKEN: '1000000000',
    // The pool size (default 10) may be set for the run; the ceiling's pool takes the same size.
    ...(process.env.SLUICE_DB_POOL_SIZE ? { SLUICE_DB_POOL_SIZE: process.env.SLUICE_DB_POOL_SIZE } : {}),
    ...env,
  });
  const rt = await openRuntime(config, { logStream: sink, supervise: false });
  try {
    const { api_key } = await bootstrap(rt.deps, { orgSlug: 'acme', email: 'bench@example.com' });
    const [org] = await rt.deps.db.select().from(organizations);
    await seed(rt.deps.db, org.id);
    await rt.deps.store.executeSql('analyze events');
    const app = await buildApp(rt.deps);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const probe = await fetch(`${url}/organizations/acme/events?limit=20`, {
        headers: { authorization: `Bearer ${api_key}` },
      });
      const body = (await probe.json()) as { events: unknown[] };
      if (probe.status !== 200 || body.events.length !== 20) throw new Error(`probe failed: ${probe.status}`);
      if (!config.databaseUrl)
        return [await load(label, `${url}/organizations/acme/events?limit=20`, api_key)];
      // Ceiling and Sluice alternate (C S C S … C): the machine's load drifts within seconds, so
      // each Sluice run is compared with the mean of the ceiling runs right before and after it.
      const ceil = await startCeiling(config.databaseUrl, config.dbPoolSize);
      try {
        const ceilings = [await load(CEILING_LABEL, ceil.url, api_key)];
        const runs: Figures[] = [];
        for (let i = 0; i < ROUNDS; i++) {
          runs.push(await load(label, `${url}/organizations/acme/events?limit=20`, api_key));
          ceilings.push(await load(CEILING_LABEL, ceil.url, api_key));
        }
        return { ceilings, runs };
      } finally {
        await ceil.close();
      }
    } finally {
      await app.close();
    }
  } finally {
    await rt.close();
  }
}

async function withScratchDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const name = `sluice_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  try {
    return await fn(u.toString());
  } finally {
    const c = new pg.Client({ connectionString: ADMIN_URL });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  }
}

async function main() {
  const cpus = os.cpus();
  console.log(
    `node ${process.version}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; ` +
      `${CONNECTIONS} connections, ${DURATION} s per run, database pool ${process.env.SLUICE_DB_POOL_SIZE ?? 'default (10)'}; ` +
      `load average ${os.loadavg()[0].toFixed(1)}\n`,
  );
  const results: Figures[] = ONLY_POSTGRES ? [] : [await bare()];
  if (!ONLY_POSTGRES) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-'));
    try {
      results.push(
        ...((await sluice('GET events, PGlite (embedded)', { SLUICE_DATA_DIR: dataDir })) as Figures[]),
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const pg = (await withScratchDatabase((url) =>
    sluice('GET events, PostgreSQL server', { DATABASE_URL: url }),
  )) as PgRounds;
  for (let i = 0; i < pg.runs.length; i++) results.push(pg.ceilings[i], pg.runs[i]);
  results.push(pg.ceilings[pg.ceilings.length - 1]);
  if (!ONLY_POSTGRES) results.push(await bare());

  console.log(
    `load average after the runs: ${os.loadavg()[0].toFixed(1)} (other work on the machine skews every figure)`,
  );
  const baseline = ONLY_POSTGRES
    ? pg.ceilings[0].rps
    : (results[0].rps + results[results.length - 1].rps) / 2;
  console.log(
    `\nbaseline (${ONLY_POSTGRES ? 'first ceiling run' : 'bare, mean of first and last run'}): ${baseline.toFixed(0)} req/s`,
  );
  console.log('| run | req/s | p50 ms | p99 ms | CPU µs/req | load | share of baseline |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.label} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.cpuUs.toFixed(0)} | ${r.load.toFixed(1)} | ${((100 * r.rps) / baseline).toFixed(1)} % |`,
    );
  }
  // Each Sluice run against the mean of its neighbouring ceiling runs. CPU time per request is
  // what the route itself costs; throughput also carries the share of the cores the process got.
  const rounds = pg.runs.map((run, i) => {
    const [a, b] = [pg.ceilings[i], pg.ceilings[i + 1]];
    return {
      ratio: run.rps / ((a.rps + b.rps) / 2),
      cpuRatio: (a.cpuUs + b.cpuUs) / 2 / run.cpuUs,
      p99: run.p99,
      ceilingP99: Math.max(a.p99, b.p99),
    };
  });
  const median = (xs: number[]) => {
    const v = [...xs].sort((x, y) => x - y);
    return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  };
  console.log(
    '\n| round | throughput ratio to ceiling | CPU ratio (ceiling/Sluice) | Sluice p99 ms | ceiling p99 ms (worse neighbour) |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const [i, r] of rounds.entries()) {
    console.log(
      `| ${i + 1} | ${r.ratio.toFixed(2)} | ${r.cpuRatio.toFixed(2)} | ${r.p99} | ${r.ceilingP99} |`,
    );
  }
  const ratio = median(rounds.map((r) => r.ratio));
  const p99 = median(rounds.map((r) => r.p99));
  console.log(
    `\nmedian over ${rounds.length} rounds: throughput ratio ${ratio.toFixed(2)} ` +
      `(spread ${Math.min(...rounds.map((r) => r.ratio)).toFixed(2)}–${Math.max(...rounds.map((r) => r.ratio)).toFixed(2)}), ` +
      `CPU ratio ${median(rounds.map((r) => r.cpuRatio)).toFixed(2)}, Sluice p99 ${p99} ms, ` +
      `ceiling p99 ${median(pg.ceilings.map((c) => c.p99))} ms; load average ${os.loadavg()[0].toFixed(1)}`,
  );
  console.log(
    `target on PostgreSQL: ≥ 0.8 of the same-work ceiling and p99 < 30 ms → ${ratio.toFixed(2)}, p99 ${p99} ms: ${
      ratio >= 0.8 && p99 < 30 ? 'met' : 'MISSED'
    }`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
