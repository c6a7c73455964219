import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../packages/server/src/app';
import { parseConfig } from '../../packages/server/src/env';
import { bootstrap } from '../../packages/server/src/modules/system/bootstrap';
import { openRuntime, type Runtime } from '../../packages/server/src/runtime';
import { type RecordsApiPeer, startRecordsApi } from '../peers/records-api';
import { type CliProcess, startCli } from '../support/cli';
import {
  createSinkDatabase,
  deployOrdersPipeline,
  ordersSpec,
  pgQuery,
  pgUrl,
  terminal,
  waitUntil,
} from '../support/runs';

// `sluice worker` processes on one PostgreSQL store, killed and stopped under running runs: a
// run whose worker dies is resumed by another worker (attempt 2) from the last committed cursor,
// fails WORKER_LOST when that one dies too, and no run is ever worked on by two workers at once.
// PostgreSQL only: the embedded store belongs to a single process.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_rw_${id}`;
const SINK_DB = `sluice_rw_sink_${id}`;
const LEASE = 2;

type Sample = { slug: string; state: string; attempt: number; owner: string | null };

describe('run workers as processes', () => {
  let rt: Runtime;
  let app: App;
  let token: string;
  let api: RecordsApiPeer;
  let pe: string;
  let sink: { drop(): Promise<unknown> };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-rw-'));
  const masterKey = randomBytes(32).toString('base64');
  const env = {
    DATABASE_URL: pgUrl(STORE_DB),
    SLUICE_DATA_DIR: dataDir,
    SLUICE_MASTER_KEY: masterKey,
    SLUICE_RUN_LEASE_SECONDS: String(LEASE),
    SLUICE_QUEUE_POLL_SECONDS: '0.5',
  };
  const children: CliProcess[] = [];

  // Every few hundred milliseconds, who holds which run: the history the exclusivity checks read.
  const samples: Sample[] = [];
  let sampler: NodeJS.Timeout | null = null;

  const call = (method: string, url: string, body?: unknown) =>
    app.inject({
      method: method as any,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
  const getRun = async (slug: string) => (await call('GET', `${pe}/runs/${slug}`)).json();
  const execute = async (slug: string) => {
    const res = await call('POST', `${pe}/pipelines/orders-sync:execute`, { run_slug: slug });
    expect(res.statusCode, res.body).toBe(202);
  };
  const sinkCount = async () => Number((await pgQuery(SINK_DB, 'select count(*) as n from orders'))[0].n);
  const cursor = async () =>
    (await call('GET', `${pe}/pipelines/orders-sync/checkpoints`)).json().checkpoints[0]?.cursor ?? null;
  const ownersOf = (slug: string, attempt: number) =>
    new Set(samples.filter((s) => s.slug === slug && s.attempt === attempt && s.owner).map((s) => s.owner));
  const pidOf = (owner: string) => Number(owner.split(':')[1]);

  async function worker(extra: Record<string, string> = {}) {
    const p = startCli(['worker'], { env: { ...env, ...extra } });
    children.push(p);
    await p.waitForStdout(/Sluice worker is running/, 60_000);
    return p;
  }
  async function kill(p: CliProcess) {
    p.child.kill('SIGKILL');
    await p.exited;
  }

  beforeAll(async () => {
    await pgQuery('postgres', `create database ${STORE_DB}`);
    sink = await createSinkDatabase(SINK_DB);
    api = await startRecordsApi();
    rt = await openRuntime(parseConfig({ ...env, SLUICE_LOG_LEVEL: 'warn' }), { supervise: false });
    app = await buildApp(rt.deps);
    await app.ready();
    token = (await bootstrap(rt.deps, { orgSlug: 'acme', email: 'owner@example.com' })).api_key;
    ({ pe } = await deployOrdersPipeline(call as any, {
      apiUrl: api.url,
      sinkDatabase: SINK_DB,
      pipeline: 'orders-sync',
      spec: ordersSpec({ inputs: false }),
    }));
    sampler = setInterval(() => {
      rt.deps.store
        .executeSql('select slug, state, attempt, lease_owner as owner from pipeline_runs')
        .then((r) => samples.push(...(r.rows as Sample[])))
        .catch(() => {});
    }, 150);
  }, 120_000);

  afterAll(async () => {
    if (sampler) clearInterval(sampler);
    for (const c of children)
      if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await app?.close();
    await rt?.close();
    await api?.close();
    await sink?.drop();
    await pgQuery('postgres', `drop database if exists ${STORE_DB} with (force)`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes a run whose worker was killed (attempt 2, same lower bound) and fails WORKER_LOST after a second death', async () => {
    api.set({ perResponse: 30, delayMs: 100 });
    const a = await worker();
    await execute('killed-once');
    const first = await api.waitForRequest((r) => r.run === 'killed-once');
    await kill(a);

    const b = await worker();
    const run = await waitUntil(() => getRun('killed-once'), terminal, 45_000);
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', attempt: 2, error: null });
    const requests = api.requests.filter((r) => r.run === 'killed-once');
    expect(requests).toHaveLength(2);
    expect(requests[0].completed).toBe(false);
    // Nothing was committed by the dead attempt: the retry starts from the same cursor.
    expect(requests[1].after).toBe(first.after);
    expect(await sinkCount()).toBe(30);
    expect(await cursor()).toBe('30');
    const [owner1] = ownersOf('killed-once', 1);
    const [owner2] = ownersOf('killed-once', 2);
    expect(ownersOf('killed-once', 1).size).toBe(1);
    expect(ownersOf('killed-once', 2).size).toBe(1);
    expect(pidOf(owner1 as string)).toBe(a.child.pid);
    expect(pidOf(owner2 as string)).toBe(b.child.pid);

    await execute('killed-twice');
    await api.waitForRequest((r) => r.run === 'killed-twice');
    await kill(b);
    const c = await worker();
    await waitUntil(
      async () => api.requests.filter((r) => r.run === 'killed-twice').length,
      (n) => n >= 2,
    );
    await kill(c);
    await worker();
    const lost = await waitUntil(() => getRun('killed-twice'), terminal, 45_000);
    expect(lost).toMatchObject({ state: 'failed', attempt: 2, error: { code: 'WORKER_LOST' } });
    expect(api.requests.filter((r) => r.run === 'killed-twice').map((r) => r.after)).toEqual(['30', '30']);
    expect(await cursor()).toBe('30');
    expect(await sinkCount()).toBe(30);
    const inputs = await rt.deps.store.executeSql(
      `select 1 from pipeline_run_inputs i join pipeline_runs r on r.id = i.run_id where r.slug = 'killed-twice'`,
    );
    expect(inputs.rows).toHaveLength(0);
  }, 180_000);

  it('never lets two workers work on one run; a stopped worker hands its run back', async () => {
    // A second worker beside the one of the first test.
    await worker();
    api.set({ perResponse: 10, delayMs: 60 });
    const slugs = ['many-1', 'many-2', 'many-3', 'many-4', 'many-5', 'many-6'];
    for (const s of slugs) await execute(s);
    for (const s of slugs) {
      const run = await waitUntil(() => getRun(s), terminal, 45_000);
      expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', attempt: 1 });
      expect(api.requests.filter((r) => r.run === s)).toHaveLength(1);
      expect(ownersOf(s, 1).size).toBeLessThanOrEqual(1);
    }

    // SIGTERM under a running run: the run goes back to the queue (same attempt) and the other
    // worker finishes it.
    api.set({ perResponse: 30, delayMs: 100 });
    await execute('handed-back');
    await api.waitForRequest((r) => r.run === 'handed-back');
    await waitUntil(
      async () => ownersOf('handed-back', 1).size,
      (n) => n > 0,
    );
    const holderPid = pidOf([...ownersOf('handed-back', 1)][0] as string);
    const holderProcess = children.find((p) => p.child.pid === holderPid)!;
    holderProcess.child.kill('SIGTERM');
    expect((await holderProcess.exited).code).toBe(0);
    const run = await waitUntil(() => getRun('handed-back'), terminal, 45_000);
    expect(run).toMatchObject({ state: 'succeeded', attempt: 1 });
    const owners = [...ownersOf('handed-back', 1)].map((o) => pidOf(o as string));
    expect(owners).toHaveLength(2);
    expect(owners[0]).toBe(holderPid);
    expect(owners[1]).not.toBe(holderPid);
  }, 180_000);

  it('fails a run that outlives the run time limit with RUN_TIMEOUT', async () => {
    for (const c of children)
      if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGTERM');
    await Promise.all(children.map((c) => c.exited));
    await worker({ SLUICE_RUN_TIMEOUT_SECONDS: '2' });
    const before = await cursor();
    api.set({ perResponse: 100, delayMs: 100 });
    await execute('too-long');
    const run = await waitUntil(() => getRun('too-long'), terminal, 30_000);
    expect(run).toMatchObject({ state: 'failed', error: { code: 'RUN_TIMEOUT' } });
    expect(await cursor()).toBe(before);
  }, 90_000);
});
