import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordsApiPeer, startRecordsApi } from '../peers/records-api';
import { type RefusingProxy, startRefusingProxy } from '../peers/refusing-proxy';
import { startTestApp, type TestApp } from '../support/app';
import { freePort } from '../support/free-port';
import {
  createSinkDatabase,
  deployOrdersPipeline,
  ordersSpec,
  PG_ADMIN,
  pgQuery,
  terminal,
  waitUntil,
} from '../support/runs';

// Run-level retries (docs/runs.md "Retries"): a run failed by a retryable connector error is
// tried again as a new attempt from its last committed checkpoints, up to SLUICE_RUN_RETRY_ATTEMPTS
// more times, with each failure in the run's logs and events and one alert after the last; a
// failure a retry cannot help fails at once. The waits are set to 0 s, so nothing sleeps.

const SINK_DB = `sluice_retry_sink_${process.pid}_${randomBytes(3).toString('hex')}`;

describe('run retries', () => {
  let t: TestApp;
  let api: RecordsApiPeer;
  let proxy: RefusingProxy;
  let owner: string;
  let pe: string;
  let sink: { drop(): Promise<unknown> };
  const org = '/organizations/acme';

  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });
  const getRun = async (slug: string) => (await call('GET', `${pe}/runs/${slug}`)).json();
  /** Executes the pipeline as run `slug` and answers the run once it ended. */
  const runToEnd = async (pipeline: string, slug: string) => {
    const res = await call('POST', `${pe}/pipelines/${pipeline}:execute`, { run_slug: slug });
    expect(res.statusCode, res.body).toBe(202);
    return waitUntil(() => getRun(slug), terminal, 30_000);
  };
  /** The run's log lines, oldest first (the API lists the newest first). */
  const logsOf = async (slug: string) =>
    (
      (await call('GET', `${pe}/runs/${slug}/logs?limit=100`)).json().logs as {
        level: string;
        step_slug: string | null;
        message: string;
      }[]
    ).reverse();
  const eventsOf = async (slug: string) =>
    ((await call('GET', `${org}/events?entity_slug=${slug}`)).json().events as any[])
      .map((e) => e.metadata)
      .reverse();
  const failedAlerts = async (pipeline: string) =>
    (
      (await call('GET', `${org}/notifications?notification_type=pipeline_run_failed`)).json()
        .notifications as any[]
    ).filter((n) => n.source_refs.some((r: any) => r.kind === 'pipeline' && r.value === pipeline));

  /** A PostgreSQL data source for the sink database at another port (the proxy, or a closed one). */
  async function warehouseAt(slug: string, port: number) {
    const u = new URL(PG_ADMIN);
    const res = await call('POST', `${org}/data-sources`, {
      type: 'postgres',
      name: slug,
      slug,
      config: {
        host: '127.0.0.1',
        port,
        database: SINK_DB,
        user: decodeURIComponent(u.username || 'postgres'),
        allow_private_hosts: true,
        connect_timeout_seconds: 5,
      },
      credentials: { password: decodeURIComponent(u.password) || 'unused' },
    });
    expect(res.statusCode, res.body).toBe(201);
  }

  async function deploy(pipeline: string, warehouse: string, table = 'orders') {
    const spec = ordersSpec({ inputs: false }) as any;
    spec.steps[1].operation.write.table = table;
    await deployOrdersPipeline((m, u, b) => call(m, u, b), {
      apiUrl: api.url,
      sinkDatabase: SINK_DB,
      pipeline,
      spec,
      firstTime: false,
      bindings: [
        ['shop-api', 'shop-api'],
        ['warehouse', warehouse],
      ],
    });
  }

  beforeAll(async () => {
    sink = await createSinkDatabase(SINK_DB);
    api = await startRecordsApi({ perResponse: 5 });
    const u = new URL(PG_ADMIN);
    proxy = await startRefusingProxy({ host: u.hostname, port: Number(u.port || 5432) });
    t = await startTestApp({
      worker: true,
      env: { SLUICE_RUN_RETRY_ATTEMPTS: '2', SLUICE_RUN_RETRY_DELAYS_SECONDS: '0' },
    });
    owner = (await t.bootstrap('acme')).api_key;
    // The first pipeline creates the shared data sources, project and environment.
    ({ pe } = await deployOrdersPipeline((m, u, b) => call(m, u, b), {
      apiUrl: api.url,
      sinkDatabase: SINK_DB,
      pipeline: 'direct',
      spec: ordersSpec({ inputs: false }),
    }));
    await warehouseAt('flaky-warehouse', proxy.port);
    await warehouseAt('closed-warehouse', await freePort());
    await deploy('flaky', 'flaky-warehouse');
    await deploy('closed', 'closed-warehouse');
    await deploy('missing-table', 'warehouse', 'no_such_table');
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([api?.close(), proxy?.close(), sink?.drop()]);
  });

  it('tries a run refused by its sink again as attempt 2, which loads the rows once', async () => {
    // Two: the sink's session opened ahead when the run starts (docs/operations.md "Connections
    // to data sources"), then the sink's own open after that one was refused.
    proxy.refuse(2);
    const run = await runToEnd('flaky', 'flaky-1');
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', attempt: 2, error: null });
    expect(proxy.counts().refused).toBe(2);
    expect(await pgQuery(SINK_DB, 'select count(*)::int as n from orders')).toEqual([{ n: 5 }]);
    const checkpoints = (await call('GET', `${pe}/pipelines/flaky/checkpoints`)).json().checkpoints;
    expect(checkpoints).toMatchObject([{ step_slug: 'orders', cursor: '5', run_slug: 'flaky-1' }]);

    // Attempt 1's failure is in the logs, with the wait and the attempt that follows.
    const logs = await logsOf('flaky-1');
    const retried = logs.filter((l) => l.step_slug === null && l.level === 'warn');
    expect(retried).toHaveLength(1);
    expect(retried[0].message).toMatch(
      /^attempt 1 failed \(STEP_FAILED: step load: .*closed the connection unexpectedly\); attempt 2 of 3 starts in 0 s from the last committed checkpoints$/,
    );
    expect(logs.map((l) => l.message)).toEqual(
      expect.arrayContaining(['attempt 1 started', 'attempt 2 started']),
    );
    // ... and in the events: queued again as attempt 2 (with its reason), then succeeded.
    const events = await eventsOf('flaky-1');
    expect(events.slice(-2)).toEqual([
      expect.objectContaining({
        state: 'queued',
        attempt: 2,
        reason: 'retryable_failure',
        error_code: 'STEP_FAILED',
        retry_at: expect.any(String),
      }),
      expect.objectContaining({ state: 'succeeded', attempt: 2 }),
    ]);
    expect(await failedAlerts('flaky')).toEqual([]);
  });

  it('fails after the last attempt when the port stays closed, and alerts once', async () => {
    const run = await runToEnd('closed', 'closed-1');
    expect(run, JSON.stringify(run)).toMatchObject({
      state: 'failed',
      attempt: 3,
      error: { code: 'STEP_FAILED', message: expect.stringMatching(/^step load: /) },
    });
    const logs = await logsOf('closed-1');
    expect(logs.filter((l) => /^attempt \d started$/.test(l.message)).map((l) => l.message)).toEqual([
      'attempt 1 started',
      'attempt 2 started',
      'attempt 3 started',
    ]);
    const warnings = logs.filter((l) => l.step_slug === null && l.level === 'warn').map((l) => l.message);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(
      /^attempt 1 failed \(STEP_FAILED: step load: .*refused.*\); attempt 2 of 3 starts in 0 s/,
    );
    expect(warnings[1]).toMatch(
      /^attempt 2 failed \(STEP_FAILED: step load: .*refused.*\); attempt 3 of 3 starts in 0 s/,
    );
    expect(logs.at(-1)).toMatchObject({
      level: 'error',
      step_slug: null,
      message: 'attempt 3 failed (STEP_FAILED); it was the last attempt',
    });
    const states = (await eventsOf('closed-1')).map((m) => [m.state ?? null, m.attempt ?? null]);
    expect(states).toEqual([
      [null, null],
      ['queued', 2],
      ['queued', 3],
      ['failed', 3],
    ]);
    // One run, one occurrence: the alert is raised by the last attempt only.
    expect(await failedAlerts('closed')).toEqual([expect.objectContaining({ occurrence_count: 1 })]);
  });

  it('fails at once when a retry cannot help', async () => {
    const run = await runToEnd('missing-table', 'missing-1');
    expect(run, JSON.stringify(run)).toMatchObject({
      state: 'failed',
      attempt: 1,
      error: { code: 'STEP_FAILED', message: expect.stringContaining('no_such_table does not exist') },
    });
    const logs = await logsOf('missing-1');
    expect(logs.filter((l) => l.message === 'attempt 2 started')).toEqual([]);
    expect(logs.filter((l) => l.step_slug === null && l.level !== 'info')).toEqual([]);
    expect((await eventsOf('missing-1')).filter((m) => m.state === 'queued')).toEqual([]);
    expect(await failedAlerts('missing-table')).toEqual([expect.objectContaining({ occurrence_count: 1 })]);
  });
});
