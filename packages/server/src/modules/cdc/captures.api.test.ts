import { type CaptureStatus, connectorFor } from '@sluice/connectors';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresCluster, startPostgresCluster } from '../../../../../test/peers/postgres-cluster';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { runCli } from '../../../../../test/support/cli';
import { freePort } from '../../../../../test/support/free-port';
import { runJobNow } from '../../../../../test/support/jobs';
import { pgCaptures, pgRelease } from '../../../../connectors/src/postgres/changes/admin';
import { cdcLagCheckJob } from '../../jobs/cdc-lag-check';
import { cdcReleaseJob } from '../../jobs/cdc-release';
import { captureName } from './index';

// Slot safety end to end (docs/cdc.md "Slot safety"): a real cluster with wal_level=logical,
// captures made as a cdc step makes them (a slot and a publication of the capture's name), their
// lag through the API, the lag and inactivity alerts on an injected clock, the release when the
// pipeline is undeployed or deleted, and the CLI listing and dropping an orphan.

const ORG = '/organizations/acme';

// Until the postgres connector offers `changes` (docs/cdc.md), this suite assembles the slot
// part of it from the connector's own functions; the real capability wins once it exists.
function ensureChanges(): () => void {
  const def = connectorFor('postgres') as { changes?: unknown };
  if (def.changes) return () => {};
  def.changes = {
    check: async () => [],
    read: async () => {
      throw new Error('not part of this suite');
    },
    captures: (conn: any, prefix: string, ctx: any): Promise<CaptureStatus[]> =>
      pgCaptures(conn, prefix, ctx),
    release: (conn: any, capture: string, ctx: any) => pgRelease(conn, capture, ctx),
  };
  return () => {
    delete def.changes;
  };
}

const spec = {
  steps: [
    {
      slug: 'changes',
      kind: 'source',
      data_source_ref: 'src',
      operation: { operation_type: 'cdc', tables: ['public.orders'] },
    },
    {
      slug: 'load',
      kind: 'sink',
      data_source_ref: 'dst',
      operation: { operation_type: 'sql', write: { table: 'orders_copy' } },
    },
  ],
  edges: [{ from: 'changes', to: 'load' }],
};

describe('cdc slot safety', () => {
  let cluster: PostgresCluster;
  let admin: pg.Client;
  let t: TestApp;
  let token: string;
  let restore: () => void;
  let now = new Date();

  const call = async (method: string, url: string, body?: unknown) => t.call(method, url, { token, body });
  const ok = async (method: string, url: string, body?: unknown) => {
    const r = await call(method, url, body);
    expect(r.statusCode, `${method} ${url}: ${r.body}`).toBeLessThan(300);
    return r.statusCode === 204 ? null : r.json();
  };
  const q = async (text: string, values: unknown[] = []) =>
    (await t.rt.deps.store.executeSql(text, values)).rows;
  const idOf = async (table: string, slug: string) =>
    (await q(`select id from ${table} where slug = $1`, [slug]))[0].id;
  const captureOf = async (pipeline: string, env: string, step = 'changes') =>
    captureName(await idOf('pipelines', pipeline), await idOf('environments', env), step);
  const makeCapture = async (name: string) => {
    await admin.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [name]);
    await admin.query(`CREATE PUBLICATION ${name} FOR TABLE orders`);
  };
  const slotExists = async (name: string) =>
    (await admin.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [name])).rowCount === 1;
  const publicationExists = async (name: string) =>
    (await admin.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [name])).rowCount === 1;
  const writeWal = (rows: number) =>
    admin.query(
      "INSERT INTO orders SELECT g, repeat('x', 500) FROM generate_series($1::int, $1::int + $2::int - 1) g",
      [Math.floor(Math.random() * 1e8), rows],
    );
  /** The release jobs queued so far, taken off the queue (the suite runs no worker). */
  const takeReleaseJobs = async () => {
    const rows = await q("delete from pgboss.job where name = 'cdc.release' returning data");
    return rows.map((r: any) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data));
  };
  const notifications = async (type: string) =>
    (await ok('GET', `${ORG}/notifications?notification_type=${type}`)).notifications as any[];

  async function deployPipeline(slug: string, env: string, dataSource = 'src-db', confirm?: string) {
    await ok('POST', `${ORG}/projects/shop/pipelines`, { name: slug, slug });
    const version = await ok('POST', `${ORG}/projects/shop/pipelines/${slug}/versions`, { spec });
    const pe = `${ORG}/projects/shop/environments/${env}`;
    const confirmed = confirm ? `?protected_environment_confirmation=${confirm}` : '';
    for (const ref of ['src', 'dst'])
      await ok('PUT', `${pe}/pipelines/${slug}/data-source-bindings/${ref}${confirmed}`, {
        data_source_slug: dataSource,
      });
    const validation = await ok('POST', `${pe}/pipeline-validation`, {
      pipeline_slug: slug,
      spec_hash: version.spec_hash,
    });
    expect(validation.valid, JSON.stringify(validation.findings)).toBe(true);
    await ok('POST', `${pe}/pipelines/${slug}:deploy`, {
      spec_hash: version.spec_hash,
      ...(confirm ? { protected_environment_confirmation: confirm } : {}),
    });
  }

  const dataSource = (slug: string, port: number) =>
    ok('POST', `${ORG}/data-sources`, {
      type: 'postgres',
      name: slug,
      slug,
      config: {
        host: '127.0.0.1',
        port,
        database: 'postgres',
        user: 'postgres',
        allow_private_hosts: true,
        connect_timeout_seconds: 2,
      },
      credentials: { password: 'unused' },
    });

  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: { wal_level: 'logical', max_replication_slots: 20 } });
    admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE TABLE orders (id int PRIMARY KEY, note text)');
    await admin.query('CREATE TABLE orders_copy (id int, note text)');
    restore = ensureChanges();
    t = await startTestApp({
      env: { SLUICE_CDC_LAG_ALERT_BYTES: String(4 * 1024 * 1024), SLUICE_CDC_INACTIVE_ALERT_MINUTES: '30' },
    });
    t.rt.deps.clock = () => now;
    token = (await t.bootstrap('acme')).api_key;
    await dataSource('src-db', cluster.port);
    await dataSource('gone-db', await freePort());
    await ok('POST', `${ORG}/projects`, { name: 'Shop', slug: 'shop' });
    await ok('POST', `${ORG}/environments`, { name: 'Staging', slug: 'staging' });
    await ok('POST', `${ORG}/environments`, { name: 'Prod', slug: 'prod', protected: true });
    await ok('PUT', `${ORG}/projects/shop/environments/staging`, {});
    await ok('PUT', `${ORG}/projects/shop/environments/prod`, { protected_environment_confirmation: 'prod' });
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    restore?.();
    await admin?.end();
    await cluster?.destroy();
  });

  it('shows each deployed cdc step capture with its lag, position and last checkpoint', async () => {
    now = new Date();
    await deployPipeline('orders-cdc', 'staging');
    const name = await captureOf('orders-cdc', 'staging');
    const url = `${ORG}/projects/shop/pipelines/orders-cdc/captures`;

    let [item] = (await ok('GET', url)).captures;
    expect(item).toMatchObject({
      step_slug: 'changes',
      environment_slug: 'staging',
      data_source_slug: 'src-db',
      capture_name: name,
      status: 'missing',
      active: null,
      lag_bytes: null,
      last_checkpoint_at: null,
    });

    await makeCapture(name);
    [item] = (await ok('GET', url)).captures;
    expect(item).toMatchObject({ status: 'ok', active: false, wal_status: 'reserved', error: null });
    expect(item.confirmed_position).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const before = item.lag_bytes as number;

    await writeWal(10_000);
    const committedAt = new Date(Date.now() - 60_000);
    await q(
      `insert into pipeline_checkpoints (organization_id, pipeline_id, environment_id, step_slug, cursor, updated_at)
       select p.organization_id, p.id, e.id, 'changes', '0/0', $1 from pipelines p, environments e
        where p.slug = 'orders-cdc' and e.slug = 'staging'`,
      [committedAt],
    );
    const page = await ok('GET', `${url}?environment_slug=staging&limit=1`);
    expect(page.has_more).toBe(false);
    [item] = page.captures;
    expect(item.lag_bytes).toBeGreaterThan(before + 4_000_000);
    expect(item.last_checkpoint_at).toBe(committedAt.toISOString());
    expect((await ok('GET', `${url}?environment_slug=prod`)).captures).toEqual([]);

    expect((await call('GET', `${ORG}/projects/shop/pipelines/nope/captures`)).statusCode).toBe(404);
  });

  it('alerts when a capture retains more than the bound or has not advanced for too long, and resolves', async () => {
    const name = await captureOf('orders-cdc', 'staging');
    // The checkpoint of the previous case is a minute old: not inactive yet.
    now = new Date();
    await runJobNow(t.rt.deps, cdcLagCheckJob, {});
    const [lagging] = await notifications('cdc_capture_lagging');
    expect(lagging).toMatchObject({
      lifecycle_state: 'open',
      project_slug: 'shop',
      environment_slug: 'staging',
    });
    expect(lagging.summary).toContain(name);
    expect(lagging.summary).toContain('step changes of pipeline orders-cdc in staging');
    expect(lagging.source_refs).toContainEqual({ kind: 'data_source', value: 'src-db' });
    expect(await notifications('cdc_capture_inactive')).toEqual([]);

    // Two hours later on the injected clock, with no newer checkpoint: inactive too.
    now = new Date(Date.now() + 2 * 3600_000);
    await runJobNow(t.rt.deps, cdcLagCheckJob, {});
    const [inactive] = await notifications('cdc_capture_inactive');
    expect(inactive.lifecycle_state).toBe('open');
    expect(inactive.title).toMatch(/has not advanced for 1[12]\d minutes/);

    // The slot catches up (as a run confirming the current position would) and a run commits.
    // A checkpoint logs the running transactions, which lets the slot's restart_lsn move up to
    // it; a transaction still open at that record holds restart_lsn back until the next one, so
    // this repeats (a few times at most) until the slot retains under half the bound.
    for (let i = 0; i < 5; i++) {
      await admin.query('CHECKPOINT');
      const [{ lsn }] = (await admin.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows;
      await admin.query('SELECT pg_replication_slot_advance($1, $2::pg_lsn)', [name, lsn]);
      const [{ retained }] = (
        await admin.query(
          'SELECT (pg_current_wal_lsn() - restart_lsn)::bigint AS retained FROM pg_replication_slots WHERE slot_name = $1',
          [name],
        )
      ).rows;
      if (Number(retained) < 2 * 1024 * 1024) break;
    }
    await q("update pipeline_checkpoints set updated_at = $1 where step_slug = 'changes'", [now]);
    await runJobNow(t.rt.deps, cdcLagCheckJob, {});
    expect((await notifications('cdc_capture_lagging'))[0].lifecycle_state).toBe('resolved');
    expect((await notifications('cdc_capture_inactive'))[0].lifecycle_state).toBe('resolved');
  });

  it('lists the captures on a data source, marks orphans and drops only those', async () => {
    const owned = await captureOf('orders-cdc', 'staging');
    const orphan = 'sluice_0123456789abcdef01234567';
    await makeCapture(orphan);
    const url = `${ORG}/data-sources/src-db/captures`;
    const list = (await ok('GET', `${url}?order=asc`)).captures as any[];
    expect(list.map((c) => c.capture_name)).toEqual([orphan, owned].sort());
    expect(list.find((c) => c.capture_name === owned)).toMatchObject({
      orphan: false,
      active: false,
      owner: {
        project_slug: 'shop',
        pipeline_slug: 'orders-cdc',
        environment_slug: 'staging',
        step_slug: 'changes',
      },
    });
    expect(list.find((c) => c.capture_name === orphan)).toMatchObject({ orphan: true, owner: null });

    const refused = await call('DELETE', `${url}/${owned}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.message).toContain('pipeline orders-cdc');
    expect(await slotExists(owned)).toBe(true);

    expect((await call('DELETE', `${url}/sluice_ffff`)).statusCode).toBe(404);
    const bad = await call('DELETE', `${url}/Robert'); DROP TABLE x`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('VALIDATION_FAILED');

    expect((await call('DELETE', `${url}/${orphan}`)).statusCode).toBe(204);
    expect(await slotExists(orphan)).toBe(false);
    expect(await publicationExists(orphan)).toBe(false);
    const events = (await ok('GET', `${ORG}/events?action=release&entity_slug=src-db`)).events;
    expect(events[0].metadata).toMatchObject({ capture_name: orphan, released: true });

    const unreachable = await call('GET', `${ORG}/data-sources/gone-db/captures`);
    expect(unreachable.statusCode).toBe(502);
    expect(unreachable.json().error).toMatchObject({
      code: 'REMOTE_FAILED',
      detailed_error: 'CONNECTION_FAILED',
    });
  });

  it('undeploying (protected: with its confirmation) releases the captures of its cdc steps', async () => {
    await deployPipeline('prod-cdc', 'prod', 'src-db', 'prod');
    const name = await captureOf('prod-cdc', 'prod');
    await makeCapture(name);
    await takeReleaseJobs();
    const pe = `${ORG}/projects/shop/environments/prod`;

    const refused = await call('POST', `${pe}/pipelines/prod-cdc:undeploy`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED');
    expect(await takeReleaseJobs()).toEqual([]);

    const withBody = await call('POST', `${pe}/pipelines/prod-cdc:undeploy`, {
      protected_environment_confirmation: 'prod',
    });
    // The action takes no body: the confirmation counts only as the query parameter.
    expect(withBody.statusCode).toBe(409);
    const done = await ok(
      'POST',
      `${pe}/pipelines/prod-cdc:undeploy?protected_environment_confirmation=prod`,
    );
    expect(done).toMatchObject({ pipeline_slug: 'prod-cdc', environment_slug: 'prod', active: false });
    const again = await call(
      'POST',
      `${pe}/pipelines/prod-cdc:undeploy?protected_environment_confirmation=prod`,
    );
    expect(again.json().error.code).toBe('PIPELINE_NOT_DEPLOYED');

    const jobs = await takeReleaseJobs();
    expect(jobs).toEqual([
      expect.objectContaining({ capture: name, stepSlug: 'changes', environmentSlug: 'prod' }),
    ]);
    expect(await slotExists(name)).toBe(true); // the job drops it, not the request
    await runJobNow(t.rt.deps, cdcReleaseJob, jobs[0]);
    expect(await slotExists(name)).toBe(false);
    expect(await publicationExists(name)).toBe(false);
    const events = (await ok('GET', `${ORG}/events?action=release&entity_slug=src-db`)).events;
    expect(events[0].metadata).toMatchObject({
      capture_name: name,
      released: true,
      pipeline_slug: 'prod-cdc',
    });
  });

  it('deploying a version without the step releases its capture; one that keeps it does not', async () => {
    await deployPipeline('swap-cdc', 'staging');
    const kept = await captureOf('swap-cdc', 'staging');
    await takeReleaseJobs();
    const pe = `${ORG}/projects/shop/environments/staging`;
    const deployVersion = async (next: unknown) => {
      const version = await ok('POST', `${ORG}/projects/shop/pipelines/swap-cdc/versions`, { spec: next });
      await ok('POST', `${pe}/pipeline-validation`, {
        pipeline_slug: 'swap-cdc',
        spec_hash: version.spec_hash,
      });
      await ok('POST', `${pe}/pipelines/swap-cdc:deploy`, { spec_hash: version.spec_hash });
    };
    // Same cdc step, another description: the capture stays.
    await deployVersion({ ...spec, steps: [{ ...spec.steps[0], description: 'orders' }, spec.steps[1]] });
    expect(await takeReleaseJobs()).toEqual([]);
    // The cdc step renamed: the old capture goes, the new step gets its own.
    const renamed = { ...spec.steps[0], slug: 'changes-v2' };
    await deployVersion({
      ...spec,
      steps: [renamed, spec.steps[1]],
      edges: [{ from: 'changes-v2', to: 'load' }],
    });
    expect(await takeReleaseJobs()).toEqual([
      expect.objectContaining({ capture: kept, stepSlug: 'changes' }),
    ]);
    const listed = (await ok('GET', `${ORG}/projects/shop/pipelines/swap-cdc/captures`)).captures;
    expect(listed.map((c: any) => [c.step_slug, c.capture_name])).toEqual([
      ['changes-v2', await captureOf('swap-cdc', 'staging', 'changes-v2')],
    ]);
  });

  it('deleting a pipeline releases its captures; an unreachable source leaves an orphan and says so', async () => {
    await deployPipeline('far-cdc', 'staging', 'gone-db');
    await takeReleaseJobs();
    await ok('DELETE', `${ORG}/projects/shop/pipelines/far-cdc`);
    const [job] = await takeReleaseJobs();
    expect(job).toMatchObject({ pipelineSlug: 'far-cdc', stepSlug: 'changes' });

    // A try that is not the last hands the failure back to the queue for a retry.
    await expect(runJobNow(t.rt.deps, cdcReleaseJob, job)).rejects.toMatchObject({
      code: 'CONNECTION_FAILED',
    });
    const last = cdcReleaseJob.handler(t.rt.deps, { sessions: undefined as never });
    await last(job, { id: 'x', retryCount: 4 });
    const events = (await ok('GET', `${ORG}/events?action=release&entity_slug=gone-db`)).events;
    expect(events[0].metadata).toMatchObject({
      capture_name: job.capture,
      released: false,
      pipeline_slug: 'far-cdc',
      error_code: 'CONNECTION_FAILED',
    });
  });

  it('sluice cdc slots lists the captures of a data source and drops an orphan', async () => {
    const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const cli = (args: string[]) => runCli(args, { env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token } });
    const owned = await captureOf('orders-cdc', 'staging');
    const orphan = 'sluice_feedfacefeedfacefeedface';
    await makeCapture(orphan);
    await writeWal(2_000);

    const listed = await cli(['cdc', 'slots', '--org', 'acme', '--data-source', 'src-db']);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines.find((l) => l.includes(orphan))).toMatch(/orphan/);
    expect(lines.find((l) => l.includes(owned))).toContain('orders-cdc/changes@staging');

    const json = JSON.parse(
      (await cli(['cdc', 'slots', '--org', 'acme', '--data-source', 'src-db', '--json'])).stdout,
    );
    expect(json.captures.find((c: any) => c.capture_name === orphan).orphan).toBe(true);

    const refused = await cli(['cdc', 'slots', 'drop', owned, '--org', 'acme', '--data-source', 'src-db']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('CONFLICT');

    const dropped = await cli(['cdc', 'slots', 'drop', orphan, '--org', 'acme', '--data-source', 'src-db']);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(await slotExists(orphan)).toBe(false);
    expect(await slotExists(owned)).toBe(true);
  });
});
