import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../packages/server/src/app';
import { parseConfig } from '../packages/server/src/env';
import { startWorker } from '../packages/server/src/jobs/worker';
import { bootstrap } from '../packages/server/src/modules/system/bootstrap';
import { openRuntime, type Runtime } from '../packages/server/src/runtime';
import { type PostgresCluster, startPostgresCluster } from './peers/postgres-cluster';
import { waitUntil } from './support/runs';

// PostgreSQL server only: a cluster of our own that we can stop and start under a running app.
describe('database restart', () => {
  let cluster: PostgresCluster;
  let rt: Runtime;
  let app: App;
  let token: string;
  const crashes: unknown[] = [];
  // The master key the runtime makes goes here, not into the work tree's ./.sluice.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-db-restart-'));
  const onCrash = (err: unknown) => crashes.push(err);

  beforeAll(async () => {
    process.on('uncaughtException', onCrash);
    process.on('unhandledRejection', onCrash);
    cluster = await startPostgresCluster();
    rt = await openRuntime(
      parseConfig({
        DATABASE_URL: cluster.url,
        SLUICE_DATA_DIR: dataDir,
        SLUICE_LOG_LEVEL: 'silent',
        SLUICE_QUEUE_POLL_SECONDS: '0.5',
      }),
      // As `serve` opens it: the pool held at its floor, warm, across the restart (db/warm.ts).
      { warmPool: true },
    );
    // A polling worker too, so pg-boss meets the outage as well.
    await startWorker(rt.deps);
    app = await buildApp(rt.deps);
    await app.ready();
    token = (await bootstrap(rt.deps, { orgSlug: 'acme', email: 'owner@example.com' })).api_key;
  });
  afterAll(async () => {
    await app?.close();
    await rt?.close();
    await cluster?.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
  });

  const events = () =>
    app.inject({
      method: 'GET',
      url: '/organizations/acme/events',
      headers: { authorization: `Bearer ${token}` },
    });

  it('answers 503 UNAVAILABLE while the server is down and recovers without a restart', async () => {
    expect((await events()).statusCode).toBe(200);

    await cluster.stop('fast');
    for (let i = 0; i < 3; i++) {
      const res = await events();
      expect(res.statusCode, res.body).toBe(503);
      const body = res.json();
      expect(body.error.code).toBe('UNAVAILABLE');
      expect(body.error.request_id).toBe(res.headers['x-request-id']);
    }
    const write = await app.inject({
      method: 'POST',
      url: '/organizations/acme/api-keys',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'during outage', role: 'viewer' }),
    });
    expect(write.statusCode).toBe(503);
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'unavailable', store: 'postgres' });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    await cluster.start();
    // The pool drops dead connections and opens new ones: no app restart needed.
    let res = await events();
    for (let i = 0; i < 20 && res.statusCode !== 200; i++) {
      await new Promise((r) => setTimeout(r, 250));
      res = await events();
    }
    expect(res.statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    // The outage wrote nothing half-way.
    const keys = await app.inject({
      method: 'GET',
      url: '/organizations/acme/api-keys',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(keys.json().api_keys.map((k: any) => k.slug)).toEqual(['bootstrap']);
  });

  it('survives a crash of the server (immediate stop) the same way', async () => {
    await cluster.stop('immediate');
    expect((await events()).statusCode).toBe(503);
    // The worker polls a few times into the outage; pg-boss must not take the process down.
    await new Promise((r) => setTimeout(r, 1500));
    await cluster.start();
    let res = await events();
    for (let i = 0; i < 20 && res.statusCode !== 200; i++) {
      await new Promise((r) => setTimeout(r, 250));
      res = await events();
    }
    expect(res.statusCode).toBe(200);
    expect(crashes).toEqual([]);
  });

  it('survives losing the connection a transaction holds, and goes on with the others', async () => {
    const store = rt.deps.store;
    const key = 4242;
    const held = () =>
      store.executeSql(
        `select pid from pg_locks where locktype = 'advisory' and classid = 0 and objid = $1 and granted`,
        [key],
      );
    let ended = 0;
    await store.withAdvisoryLock(key, async () => {
      // The session holding the lock, inside its transaction, is ended by the server.
      ended = (await held()).rows[0].pid;
      await store.executeSql('select pg_terminate_backend($1)', [ended]);
      await waitUntil(
        async () =>
          (await store.executeSql('select count(*)::int as n from pg_stat_activity where pid = $1', [ended]))
            .rows[0].n,
        (n) => n === 0,
      );
      // Its socket's end reaches this process right after the backend has gone.
      await new Promise((r) => setTimeout(r, 100));
    });
    expect(ended).toBeGreaterThan(0);
    expect(crashes).toEqual([]);
    // The broken connection left the pool; the lock went with its session.
    expect((await held()).rows).toEqual([]);
    expect((await events()).statusCode).toBe(200);
  });
});
