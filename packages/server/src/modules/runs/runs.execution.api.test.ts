import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordsApiPeer, startRecordsApi } from '../../../../../test/peers/records-api';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import {
  createSinkDatabase,
  deployOrdersPipeline,
  dumpStore,
  pgDataSourceBody,
  pgQuery,
  terminal,
  waitUntil,
} from '../../../../../test/support/runs';

// Runs end to end with the in-process worker: an HTTP source (a local records API) loading into
// a PostgreSQL table. Input values are used by the run and kept nowhere; cursors advance only
// with a committed load; a running run stops within seconds of a cancel.

const CANARY = `CanaryRegion${randomBytes(9).toString('hex')}`;
const SINK_DB = `sluice_runs_sink_${process.pid}_${randomBytes(3).toString('hex')}`;
const SINK_DB_2 = `${SINK_DB}_2`;

describe('run execution', () => {
  let t: TestApp;
  let api: RecordsApiPeer;
  let owner: string;
  let pe: string;
  let sink: { drop(): Promise<unknown> };

  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });
  const execute = async (body: unknown) => {
    const res = await call('POST', `${pe}/pipelines/orders-sync:execute`, body);
    expect(res.statusCode, res.body).toBe(202);
    return res.json();
  };
  const getRun = async (slug: string) => (await call('GET', `${pe}/runs/${slug}`)).json();
  const finished = (slug: string, ms = 30_000) => waitUntil(() => getRun(slug), terminal, ms);
  const sinkRows = () => pgQuery(SINK_DB, 'select id, name, region from orders order by id');
  const checkpoints = async () =>
    (await call('GET', `${pe}/pipelines/orders-sync/checkpoints`)).json().checkpoints;

  beforeAll(async () => {
    sink = await createSinkDatabase(SINK_DB);
    api = await startRecordsApi({ perResponse: 5 });
    t = await startTestApp({ worker: true, env: { SLUICE_RUN_LEASE_SECONDS: '3' } });
    owner = (await t.bootstrap('acme')).api_key;
    ({ pe } = await deployOrdersPipeline((m, u, b) => call(m, u, b), {
      apiUrl: api.url,
      sinkDatabase: SINK_DB,
      pipeline: 'orders-sync',
    }));
  });
  afterAll(async () => {
    await t?.close();
    await api?.close();
    await sink?.drop();
  });

  it('runs to success, loads the rows, commits the cursor and keeps no input value', async () => {
    const accepted = await execute({ input: { region: CANARY }, run_slug: 'first' });
    expect(accepted.state).toBe('queued');
    const run = await finished('first');
    expect(run, JSON.stringify(run)).toMatchObject({
      state: 'succeeded',
      attempt: 1,
      error: null,
      input_keys: ['region'],
      started_at: expect.any(String),
      finished_at: expect.any(String),
    });
    expect(run.steps.map((s: any) => [s.step_slug, s.state])).toEqual([
      ['orders', 'succeeded'],
      ['load', 'succeeded'],
    ]);
    expect(run.steps[0].rows_out).toBe(5);
    expect(run.steps[1].rows_out).toBe(5);
    expect(await sinkRows()).toHaveLength(5);
    expect(await checkpoints()).toEqual([
      { step_slug: 'orders', cursor: '5', run_slug: 'first', updated_at: expect.any(String) },
    ]);

    // The source saw the input (that is what it is for) and the run slug.
    const seen = api.requests.find((r) => r.run === 'first')!;
    expect(seen.query.region).toBe(CANARY);

    // ... and nothing kept it: run, events, logs, any table of the store, the log output.
    const runRow = (await t.rt.deps.store.executeSql(`select id from pipeline_runs where slug = 'first'`))
      .rows[0];
    expect(
      (await t.rt.deps.store.executeSql('select 1 from pipeline_run_inputs where run_id = $1', [runRow.id]))
        .rows,
    ).toHaveLength(0);
    const logs = (await call('GET', `${pe}/runs/first/logs?limit=100`)).json().logs;
    expect(logs.length).toBeGreaterThan(1);
    const events = (await call('GET', '/organizations/acme/events?entity_slug=first')).json().events;
    expect(events.map((e: any) => [e.action, e.metadata.state ?? null])).toEqual([
      ['update', 'succeeded'],
      ['execute', null],
    ]);
    for (const text of [
      JSON.stringify(run),
      JSON.stringify(logs),
      JSON.stringify(events),
      await dumpStore((q) => t.rt.deps.store.executeSql(q)),
      t.logs(),
    ]) {
      expect(text).not.toContain(CANARY);
    }
  });

  it('reads from the committed cursor next time', async () => {
    await execute({ input: { region: 'eu' }, run_slug: 'second' });
    expect((await finished('second')).state).toBe('succeeded');
    expect(api.requests.find((r) => r.run === 'second')?.after).toBe('5');
    expect((await sinkRows()).map((r) => Number(r.id))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect((await checkpoints())[0]).toMatchObject({ cursor: '10', run_slug: 'second' });
  });

  it("opens the sink's session while the source is still waiting for its first answer", async () => {
    // A data source of its own: no session of it is pooled by the runs before.
    const other = await createSinkDatabase(SINK_DB_2);
    try {
      const created = await call(
        'POST',
        '/organizations/acme/data-sources',
        pgDataSourceBody('warehouse-2', 'Warehouse 2', SINK_DB_2),
      );
      expect(created.statusCode, created.body).toBe(201);
      await deployOrdersPipeline((m, url, b) => call(m, url, b), {
        apiUrl: api.url,
        sinkDatabase: SINK_DB_2,
        pipeline: 'orders-warm',
        firstTime: false,
        bindings: [
          ['shop-api', 'shop-api'],
          ['warehouse', 'warehouse-2'],
        ],
      });
      const release = api.hold();
      try {
        const res = await call('POST', `${pe}/pipelines/orders-warm:execute`, {
          input: { region: 'eu' },
          run_slug: 'warm',
        });
        expect(res.statusCode, res.body).toBe(202);
        const asked = await api.waitForRequest((r) => r.run === 'warm');
        // No row has come yet, and the sink's session is open on its server.
        const backends = await waitUntil(
          () =>
            pgQuery(
              SINK_DB_2,
              "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'sluice'",
            ),
          (rows) => rows[0].n > 0,
          10_000,
        );
        expect(backends[0].n).toBe(1);
        expect(asked.completed).toBe(false);
      } finally {
        release();
      }
      const run = await waitUntil(() => call('GET', `${pe}/runs/warm`).then((r) => r.json()), terminal);
      expect(run.state, JSON.stringify(run)).toBe('succeeded');
      expect(await pgQuery(SINK_DB_2, 'select count(*)::int as n from orders')).toEqual([{ n: 5 }]);
    } finally {
      await other.drop();
    }
  });

  it('stops a running run within seconds of a cancel; nothing committed, cursor kept', async () => {
    api.set({ perResponse: 200, delayMs: 100 });
    try {
      await execute({ input: { region: 'eu' }, run_slug: 'slow' });
      await api.waitForRequest((r) => r.run === 'slow');
      await waitUntil(
        () => getRun('slow'),
        (r) => r.state === 'running',
      );
      const cancel = await call('POST', `${pe}/runs/slow:cancel`);
      expect(cancel.statusCode, cancel.body).toBe(202);
      expect(cancel.json().state).toBe('canceling');
      const asked = Date.now();
      const run = await finished('slow', 15_000);
      expect(run.state).toBe('canceled');
      expect(Date.now() - asked).toBeLessThan(8_000);
      expect(run.steps.every((s: any) => ['canceled', 'skipped'].includes(s.state))).toBe(true);
      expect(api.requests.find((r) => r.run === 'slow')?.completed).toBe(false);
      expect(await sinkRows()).toHaveLength(10);
      expect((await checkpoints())[0]).toMatchObject({ cursor: '10', run_slug: 'second' });
      expect((await call('POST', `${pe}/runs/slow:cancel`)).statusCode).toBe(409);
    } finally {
      api.set({ perResponse: 5, delayMs: 0 });
    }
  });

  it('fails a run whose source fails; the step error is on the run and the cursor stays', async () => {
    // The API answers 404 for any other path: point a new version at one.
    const res = await call('POST', '/organizations/acme/projects/shop/pipelines/orders-sync/versions', {
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'shop-api',
            operation: { operation_type: 'http', path: '/missing' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'orders', mode: 'upsert', key: ['id'] } },
          },
        ],
        edges: [{ from: 'orders', to: 'load' }],
      },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    const hash = res.json().spec_hash;
    const v = await call('POST', `${pe}/pipeline-validation`, {
      pipeline_slug: 'orders-sync',
      spec_hash: hash,
    });
    expect(v.json().valid, v.body).toBe(true);
    expect(
      (await call('POST', `${pe}/pipelines/orders-sync:deploy`, { spec_hash: hash })).statusCode,
    ).toBeLessThan(300);

    await execute({ run_slug: 'broken' });
    const run = await finished('broken');
    expect(run.state).toBe('failed');
    expect(run.error.code).toBe('STEP_FAILED');
    expect(run.error.message).toContain('orders');
    expect(run.steps.find((s: any) => s.step_slug === 'orders')).toMatchObject({
      state: 'failed',
      error: { code: expect.any(String), message: expect.any(String) },
    });
    expect((await checkpoints())[0]).toMatchObject({ cursor: '10', run_slug: 'second' });
  });
});
