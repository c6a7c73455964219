import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
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

// A `sluice worker` process killed after its sink committed but before the run ended (the hook:
// the test holds the run's row lock, so the worker's final update waits, and kills it once the
// target table has the rows). The retry must find the write in the sink's ledger and write
// nothing twice (insert mode, a table without a key), and a run lost again still reports the
// rows that were committed. PostgreSQL only: the embedded store belongs to a single process.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_eo_${id}`;
const SINK_DB = `sluice_eo_sink_${id}`;
const LEASE = 2;

function insertSpec() {
  const spec = ordersSpec({ inputs: false });
  spec.steps[1].operation = { operation_type: 'sql', write: { table: 'events', mode: 'insert' } } as any;
  return spec;
}

describe('sink commit and a worker killed before the run ends', () => {
  let rt: Runtime;
  let app: App;
  let token: string;
  let api: RecordsApiPeer;
  let pe: string;
  let sink: { drop(): Promise<unknown> };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-eo-'));
  // The workers' temp directory: what a killed worker leaves behind is looked for here.
  const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-eo-tmp-'));
  const runDirsOf = (pid: number | undefined) =>
    fs.readdirSync(tmpRoot).filter((n) => n.startsWith(`sluice-run-${pid}-`));
  const env = {
    TMPDIR: tmpRoot,
    DATABASE_URL: pgUrl(STORE_DB),
    SLUICE_DATA_DIR: dataDir,
    SLUICE_MASTER_KEY: randomBytes(32).toString('base64'),
    SLUICE_RUN_LEASE_SECONDS: String(LEASE),
    SLUICE_QUEUE_POLL_SECONDS: '0.5',
  };
  const children: CliProcess[] = [];

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
  const loadStep = (run: any) => run.steps.find((s: any) => s.step_slug === 'load');
  const execute = async (slug: string) => {
    const res = await call('POST', `${pe}/pipelines/events-sync:execute`, { run_slug: slug });
    expect(res.statusCode, res.body).toBe(202);
  };
  const sinkRows = async () =>
    (await pgQuery(SINK_DB, 'select count(*)::int as n, count(distinct id)::int as ids from events'))[0];
  const cursor = async () =>
    (await call('GET', `${pe}/pipelines/events-sync/checkpoints`)).json().checkpoints[0]?.cursor ?? null;
  const runState = async (slug: string) =>
    (await rt.deps.store.executeSql(`select state, attempt from pipeline_runs where slug = '${slug}'`))
      .rows[0] as { state: string; attempt: number } | undefined;

  async function worker() {
    const p = startCli(['worker'], { env });
    children.push(p);
    await p.waitForStdout(/Sluice worker is running/, 60_000);
    return p;
  }
  async function kill(p: CliProcess) {
    p.child.kill('SIGKILL');
    await p.exited;
  }

  /**
   * Holds the run's row so that the worker can commit its sink but not end the run (the final
   * transition locks the row FOR UPDATE; step and log writes do not conflict with this lock).
   */
  async function holdRun(slug: string) {
    const c = new pg.Client({ connectionString: pgUrl(STORE_DB) });
    await c.connect();
    await c.query('begin');
    await c.query('select 1 from pipeline_runs where slug = $1 for no key update', [slug]);
    return {
      release: async () => {
        await c.query('rollback');
        await c.end();
      },
    };
  }

  /** Starts a run, lets its sink commit `expected` rows in total, and kills the worker there. */
  async function killAfterCommit(slug: string, w: CliProcess, expected: number) {
    await execute(slug);
    await waitUntil(
      () => runState(slug),
      (r) => r?.state === 'running',
    );
    const hold = await holdRun(slug);
    try {
      await waitUntil(sinkRows, (r) => r.n >= expected, 30_000);
      expect(await runState(slug)).toMatchObject({ state: 'running', attempt: 1 });
      await kill(w);
    } finally {
      await hold.release();
    }
  }

  beforeAll(async () => {
    await pgQuery('postgres', `create database ${STORE_DB}`);
    sink = await createSinkDatabase(SINK_DB);
    await pgQuery(SINK_DB, 'create table events (id bigint, name text, region text)');
    api = await startRecordsApi();
    rt = await openRuntime(parseConfig({ ...env, SLUICE_LOG_LEVEL: 'warn' }), { supervise: false });
    app = await buildApp(rt.deps);
    await app.ready();
    token = (await bootstrap(rt.deps, { orgSlug: 'acme', email: 'owner@example.com' })).api_key;
    ({ pe } = await deployOrdersPipeline(call as any, {
      apiUrl: api.url,
      sinkDatabase: SINK_DB,
      pipeline: 'events-sync',
      spec: insertSpec(),
    }));
  }, 120_000);

  afterAll(async () => {
    for (const c of children)
      if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await app?.close();
    await rt?.close();
    await api?.close();
    await sink?.drop();
    await pgQuery('postgres', `drop database if exists ${STORE_DB} with (force)`);
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(tmpRoot, { recursive: true, force: true });
  });

  it('retries without writing the committed rows again, and reports them', async () => {
    api.set({ perResponse: 30, delayMs: 30 });
    await killAfterCommit('commit-then-die', await worker(), 30);

    await worker();
    const run = await waitUntil(() => getRun('commit-then-die'), terminal, 45_000);
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', attempt: 2, error: null });
    // The retry read the same records again (the cursor had not advanced) but wrote none of them.
    expect(api.requests.filter((r) => r.run === 'commit-then-die').map((r) => r.after)).toEqual([null, null]);
    expect(await sinkRows()).toEqual({ n: 30, ids: 30 });
    expect(loadStep(run)).toMatchObject({ state: 'succeeded', rows_out: 30 });
    expect(await cursor()).toBe('30');
    const ledger = await pgQuery(SINK_DB, 'select commit_key, rows from sluice_sink_commits');
    expect(ledger).toHaveLength(1);
    expect(Number(ledger[0].rows)).toBe(30);
  }, 180_000);

  it('a run lost after its sink committed fails WORKER_LOST, still reports the committed rows, and its temp directory goes', async () => {
    const [live] = children.filter((c) => c.child.exitCode === null && c.child.signalCode === null);
    await killAfterCommit('commit-then-lost', live, 60);

    // Attempt 2 starts (its source request is in flight) and dies too.
    const second = await worker();
    await waitUntil(
      async () => api.requests.filter((r) => r.run === 'commit-then-lost').length,
      (n) => n >= 2,
    );
    await waitUntil(
      () => getRun('commit-then-lost'),
      (r) => r.attempt === 2 && loadStep(r).rows_out === 30,
      15_000,
    );
    await kill(second);
    // Killed mid-run, the worker could not remove its run's temp directory; the next worker to
    // start removes it, and only it (a live process's directory and foreign names stay).
    expect(runDirsOf(second.child.pid)).toHaveLength(1);
    fs.mkdirSync(path.join(tmpRoot, `sluice-run-${process.pid}-live`));
    fs.mkdirSync(path.join(tmpRoot, 'sluice-run-not-ours'));

    await worker();
    expect(runDirsOf(second.child.pid)).toEqual([]);
    expect(fs.readdirSync(tmpRoot)).toEqual(
      expect.arrayContaining([`sluice-run-${process.pid}-live`, 'sluice-run-not-ours']),
    );
    const lost = await waitUntil(() => getRun('commit-then-lost'), terminal, 45_000);
    expect(lost, JSON.stringify(lost)).toMatchObject({
      state: 'failed',
      attempt: 2,
      error: { code: 'WORKER_LOST' },
    });
    expect(loadStep(lost).rows_out).toBe(30);
    expect(await sinkRows()).toEqual({ n: 60, ids: 60 });
  }, 180_000);
});
