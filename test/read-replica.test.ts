import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../packages/server/src/app';
import { openReads, type Reads } from '../packages/server/src/db/replica';
import { parseConfig } from '../packages/server/src/env';
import { bootstrap } from '../packages/server/src/modules/system/bootstrap';
import { openRuntime, type Runtime } from '../packages/server/src/runtime';
import { createDatabase, type PostgresCluster, startPostgresCluster } from './peers/postgres-cluster';
import { startCli } from './support/cli';
import { freePort } from './support/free-port';
import { bearerCall, createSinkDatabase, deployOrdersPipeline, waitUntil } from './support/runs';

// Lists read from a hot standby (docs/operations.md "Read replicas"): a cluster of our own and a
// real streaming standby of it (pg_basebackup -R), the standby's replay paused and resumed, the
// standby stopped under a running app. The bound on staleness is judged on an injected clock;
// the replication itself is waited for, not slept on. PostgreSQL server only.

describe('read replica', () => {
  let primary: PostgresCluster;
  let standby: PostgresCluster;
  let rt: Runtime;
  let app: App;
  let reads: Reads;
  let token = '';
  let now = 1_000_000;
  const MAX_LAG = 1000;
  const changes: [boolean, string][] = [];
  let storeUrl = '';
  let readUrl = '';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-replica-'));

  const call = async (method: string, url: string, body?: unknown) => {
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      payload: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.statusCode, body: res.json() };
  };
  const onStandby = (sql: string) => sqlOn(readUrl, sql);
  /**
   * Checks until the standby has replayed everything the store wrote up to now: until it holds a
   * store position read by one of this call's checks (the clock at which the standby is fresh is
   * at least this call's first check). A staleness of 10 ms alone would also accept the position
   * read by the check before the call, which can be older than the write the caller waits for.
   */
  const caughtUp = async (r: Reads = reads) => {
    const first = now + 10;
    await waitUntil(
      async () => {
        now += 10;
        await r.check();
        return r.state();
      },
      (s) => s.usable && s.staleMs !== null && now - s.staleMs >= first,
    );
  };
  const events = async () => (await call('GET', '/organizations/acme/events?limit=100')).body;
  const served = () => reads.state().served;

  beforeAll(async () => {
    primary = await startPostgresCluster();
    storeUrl = await createDatabase(primary.url, 'sluice');
    standby = await startPostgresCluster({ standbyOf: primary });
    readUrl = new URL(storeUrl.replace(`:${primary.port}/`, `:${standby.port}/`)).toString();
    rt = await openRuntime(
      parseConfig({
        DATABASE_URL: storeUrl,
        SLUICE_DATA_DIR: dataDir,
        SLUICE_LOG_LEVEL: 'silent',
        SLUICE_QUEUE_POLL_SECONDS: '0.5',
      }),
    );
    reads = await openReads(rt.deps.store, {
      url: readUrl,
      maxLagMs: MAX_LAG,
      manual: true,
      clock: () => now,
      onChange: (usable, reason) => changes.push([usable, reason]),
    });
    rt.deps.reads = reads;
    app = await buildApp(rt.deps);
    await app.ready();
    token = (await bootstrap(rt.deps, { orgSlug: 'acme', email: 'owner@example.com' })).api_key;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await reads?.close();
    await rt?.close();
    await standby?.destroy();
    await primary?.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads the events list from the standby once it has replayed the store', async () => {
    await caughtUp();
    const before = served();
    const page = await events();
    expect(served().replica).toBe(before.replica + 1);
    expect(served().primary).toBe(before.primary);
    rt.deps.reads = undefined;
    try {
      expect(await events()).toEqual(page);
    } finally {
      rt.deps.reads = reads;
    }
    expect(changes).toEqual([[true, 'replaying']]);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('sluice_read_replica_usable 1');
    expect(metrics).toContain(`sluice_list_reads_total{served="replica"} ${served().replica}`);
    expect(metrics).toMatch(/^sluice_read_replica_staleness_seconds 0(\.0\d+)?$/m);
  });

  it('serves a standby behind by less than the bound, then the store once it is further behind', async () => {
    await caughtUp();
    const settled = reads.state().staleMs!;
    await onStandby('select pg_wal_replay_pause()');
    try {
      const created = await call('POST', '/organizations/acme/projects', { name: 'Late', slug: 'late' });
      expect(created.status).toBe(201);
      now += 100;
      await reads.check();
      // Behind, within the bound: the standby answers, without the project's event yet.
      const behind = reads.state();
      expect(behind.usable).toBe(true);
      expect(behind.staleMs).toBeGreaterThanOrEqual(100);
      expect(behind.staleMs).toBeLessThanOrEqual(100 + settled);
      const stale = await events();
      expect(stale.events.some((e: any) => e.entity_slug === 'late')).toBe(false);
      // Past the bound: the store answers, with it.
      now += MAX_LAG;
      await reads.check();
      expect(reads.state()).toMatchObject({
        usable: false,
        reason: `the standby is more than ${MAX_LAG} ms behind`,
      });
      const before = served();
      const current = await events();
      expect(current.events.some((e: any) => e.entity_slug === 'late' && e.entity_type === 'project')).toBe(
        true,
      );
      expect(served().primary).toBe(before.primary + 1);
      expect(changes.at(-1)).toEqual([false, `the standby is more than ${MAX_LAG} ms behind`]);
    } finally {
      await onStandby('select pg_wal_replay_resume()');
    }
    // Replayed again: back on the standby, which now has it.
    await caughtUp();
    const before = served();
    expect((await events()).events.some((e: any) => e.entity_slug === 'late')).toBe(true);
    expect(served().replica).toBe(before.replica + 1);
    expect(changes.at(-1)).toEqual([true, 'replaying']);
  });

  it('asks the store when the standby has not replayed what a list needs (a new project environment)', async () => {
    await caughtUp();
    await onStandby('select pg_wal_replay_pause()');
    try {
      expect(
        (await call('POST', '/organizations/acme/projects', { name: 'New', slug: 'fresh' })).status,
      ).toBe(201);
      expect(
        (await call('POST', '/organizations/acme/environments', { name: 'Dev', slug: 'dev' })).status,
      ).toBe(201);
      expect((await call('PUT', '/organizations/acme/projects/fresh/environments/dev')).status).toBeLessThan(
        300,
      );
      now += 50;
      await reads.check();
      expect(reads.state().usable).toBe(true);
      const before = served();
      for (const path of ['runs', 'runs?state=failed', 'runs/nope/logs']) {
        const r = await call('GET', `/organizations/acme/projects/fresh/environments/dev/${path}`);
        // The standby has no such project environment yet; the store answers as it would alone.
        if (path.endsWith('logs')) expect(r.body.error.code).toBe('NOT_FOUND');
        else expect(r).toMatchObject({ status: 200, body: { runs: [], has_more: false } });
      }
      expect(served().retried).toBe(before.retried + 3);
    } finally {
      await onStandby('select pg_wal_replay_resume()');
    }
  });

  it("reads a running run's log from the store, and an ended run's from the standby", async () => {
    const sinkDb = `sluice_replica_sink_${process.pid}`;
    const sink = await createSinkDatabase(sinkDb);
    try {
      const { pe } = await deployOrdersPipeline(
        bearerCall(app, () => token),
        {
          apiUrl: 'http://127.0.0.1:9',
          sinkDatabase: sinkDb,
          pipeline: 'orders',
        },
      );
      const run = await call('POST', `${pe}/pipelines/orders:execute`, { input: { region: 'eu' } });
      expect(run.status, JSON.stringify(run.body)).toBeLessThan(300);
      await caughtUp();
      // Queued (no worker here): its end and last lines could reach the standby after a client
      // saw them on the store, so the store answers.
      let before = served();
      const open = await call('GET', `${pe}/runs/${run.body.slug}/logs`);
      expect(open.status).toBe(200);
      expect(served()).toMatchObject({ replica: before.replica, primary: before.primary + 1 });
      expect((await call('POST', `${pe}/runs/${run.body.slug}:cancel`)).body.state).toBe('canceled');
      await caughtUp();
      before = served();
      const ended = await call('GET', `${pe}/runs/${run.body.slug}/logs`);
      expect(ended.body.logs.map((l: any) => l.message)).toContain('cancel requested by api_key');
      expect(served()).toMatchObject({ replica: before.replica + 1, primary: before.primary });
    } finally {
      await sink.drop();
    }
  });

  it('answers from the store when the standby goes down, and returns to it when it is back', async () => {
    await caughtUp();
    const expected = await events();
    await standby.stop('fast');
    try {
      // Still believed fresh: the standby's failure is retried on the store within the request.
      const before = served();
      expect(await events()).toEqual(expected);
      expect(served().retried).toBe(before.retried + 1);
      now += 10;
      await reads.check();
      const down = reads.state();
      expect(down.usable).toBe(false);
      expect(down.reason).toMatch(/^the standby did not answer \(/);
      expect(down.reason).not.toContain(String(standby.port));
      expect(await events()).toEqual(expected);
      expect(served().primary).toBe(before.primary + 1);
    } finally {
      await standby.start();
    }
    await caughtUp();
    const before = served();
    expect(await events()).toEqual(expected);
    expect(served().replica).toBe(before.replica + 1);
  });

  it('sets the standby aside for a while when reads fail there and not on the store (a role without grants)', async () => {
    // The role replicates to the standby like everything else; it may connect, not read the tables.
    await sqlOn(storeUrl, 'create role sluice_reader login');
    await caughtUp();
    const url = new URL(readUrl);
    url.username = 'sluice_reader';
    const expected = await events();
    const grantless = await openReads(rt.deps.store, {
      url: url.toString(),
      maxLagMs: MAX_LAG,
      manual: true,
      clock: () => now,
    });
    rt.deps.reads = grantless;
    try {
      // Its first check can find the store a few records ahead of the standby (the store's own
      // upkeep, on a loaded machine): checked again until the standby has them.
      await caughtUp(grantless);
      expect(grantless.state().usable).toBe(true);
      for (let i = 0; i < 5; i++) expect(await events()).toEqual(expected);
      expect(grantless.state()).toMatchObject({
        usable: false,
        reason:
          '5 list reads in a row failed on the standby and not on the store (last: 42501); the store answers for 30 s',
        served: { replica: 0, retried: 5, primary: 0 },
      });
      // Set aside: the store answers at once, checks or not, until the 30 s are over.
      now += 29_000;
      await grantless.check();
      expect(await events()).toEqual(expected);
      expect(grantless.state().served).toEqual({ replica: 0, retried: 5, primary: 1 });
      now += 1_001;
      await grantless.check();
      expect(grantless.state().usable).toBe(true);
    } finally {
      rt.deps.reads = reads;
      await grantless.close();
    }
  });

  it('refuses a database that is not a copy of the store, and keeps reading the store', async () => {
    const other = await createDatabase(primary.url, 'elsewhere');
    const wrong = await openReads(rt.deps.store, { url: other, maxLagMs: MAX_LAG, manual: true });
    try {
      expect(wrong.state()).toMatchObject({
        usable: false,
        reason: 'DATABASE_READ_URL is not a copy of the store (another cluster or database)',
      });
      expect(
        await wrong.run(async (s) => (await s.executeSql('select current_database() as d')).rows[0].d),
      ).toBe('sluice');
    } finally {
      await wrong.close();
    }
  });

  it('is opened from DATABASE_READ_URL for API hosts, not for other processes', async () => {
    const config = parseConfig({
      DATABASE_URL: storeUrl,
      DATABASE_READ_URL: readUrl,
      SLUICE_DATA_DIR: dataDir,
      SLUICE_LOG_LEVEL: 'silent',
      SLUICE_DB_POOL_SIZE: '3',
    });
    expect(config.reads).toEqual({ url: readUrl, maxLagMs: 1000 });
    const sessions = async () =>
      Number(
        (
          await onStandby(
            `select count(*) as n from pg_stat_activity where datname = 'sluice' and pid <> pg_backend_pid()`,
          )
        )[0].n,
      );
    await caughtUp();
    const base = await sessions();
    // As `serve` opens it: its standby pool opened to the floor, warm, like the store's.
    const host = await openRuntime(config, { supervise: false, reads: true, warmPool: true });
    const other = await openRuntime(config, { supervise: false });
    try {
      const hostReads = host.deps.reads!;
      await waitUntil(
        async () => {
          await hostReads.check();
          return hostReads.state();
        },
        (s) => s.usable,
      );
      // Its standby pool opened to its floor (a pool of 3) once the standby was fresh.
      await waitUntil(sessions, (n) => n - base >= 3);
      expect(other.deps.reads).toBeUndefined();
    } finally {
      const open = await sessions();
      await host.close();
      // The host's standby pool held exactly its three connections. A closed connection's backend
      // leaves pg_stat_activity when it has exited, a moment after the client closed it.
      const left = await waitUntil(sessions, (n) => open - n >= 3);
      expect(open - left).toBe(3);
      await other.close();
    }
  });

  it('`sluice serve` reads lists from DATABASE_READ_URL and says so when it starts', async () => {
    const apiPort = await freePort();
    const serve = startCli(['serve', '--no-worker'], {
      env: {
        DATABASE_URL: storeUrl,
        DATABASE_READ_URL: readUrl,
        SLUICE_DATA_DIR: dataDir,
        SLUICE_API_ADDR: `127.0.0.1:${apiPort}`,
        SLUICE_APP_ADDR: `127.0.0.1:${await freePort()}`,
      },
    });
    try {
      await serve.waitForStdout(/lists: {4}.*\n/, 60_000);
      expect(serve.stdout()).toMatch(
        /lists: {4}(the read replica \(DATABASE_READ_URL, at most 1000 ms behind\)|the store for now: the read replica \(DATABASE_READ_URL\) is not usable, the standby is more than 1000 ms behind)\n/,
      );
      expect(serve.stdout()).not.toContain(readUrl);
      const metricsOf = async () => (await fetch(`http://127.0.0.1:${apiPort}/metrics`)).text();
      const before = await metricsOf();
      const listReads = (text: string, served: string) =>
        Number(
          new RegExp(`^sluice_list_reads_total\\{served="${served}"\\} (\\d+)$`, 'm').exec(text)?.[1] ??
            Number.NaN,
        );
      const counted = (text: string) =>
        ['replica', 'primary', 'retried'].map((s) => listReads(text, s)).reduce((a, b) => a + b);
      expect(listReads(before, 'replica')).toBe(0);
      // Each list read is counted once, where it was answered. On a loaded machine the standby can
      // fall more than 1000 ms behind between its check and the read (the store then answers, as
      // it should), so the read is made again until one is answered by the standby.
      let metrics = before;
      for (let tries = 0; listReads(metrics, 'replica') === 0; tries++) {
        expect(tries).toBeLessThan(20);
        await waitUntil(metricsOf, (m) => m.includes('sluice_read_replica_usable 1'));
        const res = await fetch(`http://127.0.0.1:${apiPort}/organizations/acme/events?limit=5`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(200);
        const after = await metricsOf();
        expect(counted(after)).toBe(counted(metrics) + 1);
        metrics = after;
      }
      expect(listReads(metrics, 'replica')).toBe(1);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  }, 120_000);
  it('stops reading a standby promoted away from the store, and reads the store itself under another address', async () => {
    // The store under a second address (its own URL): always fresh.
    const itself = await openReads(rt.deps.store, {
      url: storeUrl,
      maxLagMs: MAX_LAG,
      manual: true,
      clock: () => now,
    });
    try {
      expect(itself.state()).toMatchObject({ usable: true, reason: 'the store itself' });
    } finally {
      await itself.close();
    }
    // Promoted: the same cluster identity, out of recovery, its own history from now on.
    await caughtUp();
    await onStandby('select pg_promote()');
    await waitUntil(
      async () => {
        now += 10;
        await reads.check();
        return reads.state();
      },
      (s) => !s.usable,
    );
    expect(reads.state().reason).toBe(
      'DATABASE_READ_URL is no standby but another server (a promoted standby?)',
    );
    const before = served();
    expect((await events()).events.length).toBeGreaterThan(0);
    expect(served().primary).toBe(before.primary + 1);
  });
});

async function sqlOn(url: string, sql: string) {
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}
