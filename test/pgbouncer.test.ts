import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../packages/server/src/app';
import { buildAppHost } from '../packages/server/src/app-host/app-host';
import { openStore, type Store } from '../packages/server/src/db/client';
import { migrate, migrationsFolder } from '../packages/server/src/db/migrate';
import { parseConfig } from '../packages/server/src/env';
import { tick } from '../packages/server/src/modules/triggers/trigger-tick';
import { openRuntime, type Runtime } from '../packages/server/src/runtime';
import { type PgBouncerPeer, startPgBouncer } from './peers/pgbouncer';
import { type RecordsApiPeer, startRecordsApi } from './peers/records-api';
import { signUpWithToken } from './support/accounts';
import { type CliProcess, startCli } from './support/cli';
import {
  bearerCall,
  createSinkDatabase,
  deployOrdersPipeline,
  ordersSpec,
  PG_ADMIN,
  pgQuery,
  pgUrl,
  terminal,
  waitUntil,
} from './support/runs';
import { rewindCursor } from './support/triggers';

// Sluice behind Debian's PgBouncer 1.18 in transaction pooling mode (docs/operations.md "Behind
// PgBouncer"): a store created empty and migrated through the pooler, the API host and a
// `sluice worker` process whose queue consumer polls through it, one pipeline run end to end.
// PostgreSQL server only: PGlite has no pooler.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_pgb_${id}`;
const SINK_DB = `sluice_pgb_sink_${id}`;

describe('behind PgBouncer in transaction pooling mode', () => {
  let bouncer: PgBouncerPeer;
  let records: RecordsApiPeer;
  let sink: { drop(): Promise<unknown> };
  let rt: Runtime;
  let app: App;
  let appHost: FastifyInstance;
  let worker: CliProcess;
  let token = '';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pgb-'));
  let env: Record<string, string>;

  const call = (method: string, url: string, body?: unknown) =>
    bearerCall(app, () => token)(method, url, body);
  const storeStats = async () => (await bouncer.admin('SHOW STATS')).find((r) => r.database === STORE_DB);

  beforeAll(async () => {
    await pgQuery('postgres', `create database ${STORE_DB}`);
    sink = await createSinkDatabase(SINK_DB);
    records = await startRecordsApi({ perResponse: 25 });
    // Fewer server connections than the processes' clients: they must share them.
    bouncer = await startPgBouncer({ serverUrl: PG_ADMIN, poolSize: 3 });
    env = {
      DATABASE_URL: bouncer.urlFor(pgUrl(STORE_DB)),
      SLUICE_DB_POOLER: 'transaction',
      SLUICE_DATA_DIR: dataDir,
      SLUICE_MASTER_KEY: randomBytes(32).toString('base64'),
      SLUICE_TRIGGER_TICK_SECONDS: '0',
    };
    // The empty store is migrated through the pooler (the migration lock included).
    rt = await openRuntime(parseConfig({ ...env, SLUICE_LOG_LEVEL: 'warn' }), { supervise: false });
    app = await buildApp(rt.deps);
    await app.ready();
    appHost = await buildAppHost(rt.deps);
    await appHost.ready();
    worker = startCli(['worker'], { env });
    await worker.waitForStdout(/Sluice worker is running/, 60_000);
  }, 180_000);

  afterAll(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await appHost?.close();
    await app?.close();
    await rt?.close();
    await bouncer?.close();
    await records?.close();
    await sink?.drop();
    await pgQuery('postgres', `drop database if exists ${STORE_DB} with (force)`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('signs up, deploys and executes a pipeline whose run a worker finishes, every statement through the pooler', async () => {
    expect(rt.deps.config.queuePollSeconds).toBe(0.5);
    const before = await storeStats();
    const signUpCall = (method: string, url: string, o: { body?: unknown } = {}) =>
      app.inject({ method: method as any, url, payload: o.body as any });
    const account = await signUpWithToken({ call: signUpCall }, appHost, {
      email: 'owner@example.com',
      name: 'Owner',
    });
    token = account.token;
    const org = await call('POST', '/organizations', { name: 'Acme', slug: 'acme' });
    expect(org.statusCode, org.body).toBe(201);
    // The hot reads that name their prepared statements elsewhere (token lookup, membership),
    // many at once over three server connections.
    const lists = await Promise.all(
      Array.from({ length: 12 }, () => call('GET', '/organizations/acme/events')),
    );
    for (const res of lists) expect(res.statusCode, res.body).toBe(200);

    const { pe } = await deployOrdersPipeline(call, {
      apiUrl: records.url,
      sinkDatabase: SINK_DB,
      pipeline: 'orders-sync',
      spec: ordersSpec({ inputs: false }),
    });
    const exec = await call('POST', `${pe}/pipelines/orders-sync:execute`, {
      run_slug: 'through-the-pooler',
    });
    expect(exec.statusCode, exec.body).toBe(202);
    const run = await waitUntil(
      async () => (await call('GET', `${pe}/runs/through-the-pooler`)).json(),
      terminal,
      45_000,
    );
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', attempt: 1, error: null });
    expect(Number((await pgQuery(SINK_DB, 'select count(*) as n from orders'))[0].n)).toBe(25);

    const list = await call('GET', `${pe}/runs`);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().runs.map((r: any) => r.slug)).toContain('through-the-pooler');
    const logs = await call('GET', `${pe}/runs/through-the-pooler/logs`);
    expect(logs.statusCode, logs.body).toBe(200);
    expect(logs.json().logs.length).toBeGreaterThan(0);

    // A schedule's tick (claims with FOR UPDATE SKIP LOCKED, in one transaction) starts a run
    // through the pooler as well.
    const trigger = await call('POST', `${pe}/pipelines/orders-sync/triggers`, {
      name: 'every minute',
      slug: 'every-minute',
      kind: 'schedule',
      schedule: { cron: '* * * * *', time_zone: 'UTC', overlap: 'allow' },
    });
    expect(trigger.statusCode, trigger.body).toBe(201);
    await rewindCursor({ rt }, 'every-minute', new Date(Date.now() - 90_000).toISOString());
    expect((await tick(rt.deps)).started).toBeGreaterThan(0);
    const scheduled = await waitUntil(
      async () => (await call('GET', `${pe}/runs?trigger_slug=every-minute`)).json().runs as any[],
      (runs) => runs.length > 0 && runs.every(terminal),
      45_000,
    );
    for (const r of scheduled) expect(r.state, JSON.stringify(r)).toBe('succeeded');

    // The pooler carried the work: its transaction count for the store grew, and every server
    // session on the store's database right now is one of PgBouncer's server connections.
    const after = await storeStats();
    expect(Number(after.total_xact_count)).toBeGreaterThan(Number(before.total_xact_count) + 50);
    const serverPorts = new Set(
      (await bouncer.admin('SHOW SERVERS'))
        .filter((s) => s.database === STORE_DB)
        .map((s) => Number(s.local_port)),
    );
    const sessions = await pgQuery(
      'postgres',
      'select client_port from pg_stat_activity where datname = $1 and backend_type = $2',
      [STORE_DB, 'client backend'],
    );
    expect(sessions.length).toBeGreaterThan(0);
    expect(sessions.length).toBeLessThanOrEqual(3);
    for (const s of sessions) expect(serverPorts.has(Number(s.client_port))).toBe(true);
  }, 120_000);

  describe('LISTEN', () => {
    const notify = (store: Store) =>
      store.executeSql(`select pg_notify('sluice_pgb_probe', 'ping')`).then(() => undefined);
    const heard = async (store: Store, ms: number) => {
      const got: (string | null)[] = [];
      const stop = await store.listen('sluice_pgb_probe', (p) => got.push(p));
      try {
        await notify(store);
        const until = Date.now() + ms;
        while (got.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
        return got;
      } finally {
        await stop();
      }
    };
    const open = (o: { pooler?: 'transaction'; directUrl?: string }) =>
      openStore({ databaseUrl: bouncer.urlFor(pgUrl(STORE_DB)), dataDir: '', ...o });

    it('through the pooler is accepted and then never delivers; the switch refuses it, or keeps it on the direct URL', async () => {
      const naive = await open({});
      try {
        expect(await heard(naive, 1500)).toEqual([]);
      } finally {
        await naive.close();
      }
      const switched = await open({ pooler: 'transaction' });
      try {
        await expect(switched.listen('sluice_pgb_probe', () => {})).rejects.toThrow(/DATABASE_DIRECT_URL/);
      } finally {
        await switched.close();
      }
      const direct = await open({ pooler: 'transaction', directUrl: pgUrl(STORE_DB) });
      try {
        expect(await heard(direct, 5000)).toEqual(['ping']);
      } finally {
        await direct.close();
      }
    });
  });

  it('migrates an empty store from three processes at once, one at a time, through the pooler', async () => {
    const db = `sluice_pgb_mig_${id}`;
    await pgQuery('postgres', `create database ${db}`);
    const stores = await Promise.all(
      [0, 1, 2].map(() =>
        openStore({
          databaseUrl: bouncer.urlFor(pgUrl(db)),
          dataDir: '',
          poolSize: 2,
          pooler: 'transaction',
        }),
      ),
    );
    try {
      // Who holds the lock when: the holds must not overlap.
      const holds: [number, number][] = [];
      await Promise.all(
        stores.map((store) =>
          store.withAdvisoryLock(0x51_1ce_7e, async () => {
            const from = Date.now();
            await new Promise((r) => setTimeout(r, 300));
            holds.push([from, Date.now()]);
          }),
        ),
      );
      holds.sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < holds.length; i++) expect(holds[i][0]).toBeGreaterThanOrEqual(holds[i - 1][1]);
      await Promise.all(stores.map((store) => migrate(store)));
      const [applied] = await pgQuery(db, 'select count(*)::int as n from drizzle.__drizzle_migrations');
      expect(applied.n).toBe(fs.readdirSync(migrationsFolder).filter((f) => f.endsWith('.sql')).length);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await pgQuery('postgres', `drop database if exists ${db} with (force)`);
    }
  });

  it('answers named prepared statements only with the switch on', async () => {
    // Two clients of one process that prepare the same name: on one server connection the
    // second finds it taken, on another the first finds it missing.
    const burst = async (store: Store) => {
      const results = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) => store.prepared('sluice_pgb_probe', 'select $1::int as n', [i])),
      );
      return results
        .filter((r) => r.status === 'rejected')
        .map((r) => (r as PromiseRejectedResult).reason.code);
    };
    const url = bouncer.urlFor(pgUrl(STORE_DB));
    const naive = await openStore({ databaseUrl: url, dataDir: '', poolSize: 6 });
    const switched = await openStore({ databaseUrl: url, dataDir: '', poolSize: 6, pooler: 'transaction' });
    try {
      const failures: string[] = [];
      for (let i = 0; i < 5 && failures.length === 0; i++) failures.push(...(await burst(naive)));
      expect(failures.length).toBeGreaterThan(0);
      expect(new Set(failures.map((c) => ['42P05', '26000'].includes(c)))).toEqual(new Set([true]));
      for (let i = 0; i < 5; i++) expect(await burst(switched)).toEqual([]);
    } finally {
      await naive.close();
      await switched.close();
    }
  });
});
