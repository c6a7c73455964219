import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordsApiPeer, startRecordsApi } from '../../../test/peers/records-api';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { runCli, startCli } from '../../../test/support/cli';
import { createSinkDatabase, ordersSpec, PG_ADMIN, pgQuery, waitUntil } from '../../../test/support/runs';

// The pipeline and run commands as a user runs them: the real CLI in a child process against a
// listening API host with an in-process worker, an HTTP records API as the source and a scratch
// PostgreSQL database as the sink. Data sources and bindings are set up through the API.

const CANARY = `CanaryRegion${randomBytes(9).toString('hex')}`;
const SINK_DB = `sluice_cli_sink_${process.pid}_${randomBytes(3).toString('hex')}`;
const scope = ['--org', 'acme', '--project', 'shop'];
const env = [...scope, '--env', 'staging'];

describe('sluice pipelines and runs', () => {
  let t: TestApp;
  let records: RecordsApiPeer;
  let sink: { drop(): Promise<unknown> };
  let token: string;
  let baseUrl: string;
  let dir: string;
  const cli = (args: string[], input?: string) =>
    runCli(args, { env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token }, input });
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await t.call(method, url, { token, body });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res;
  };
  const specFile = (name: string, spec: unknown) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify(spec, null, 2));
    return file;
  };
  const bind = async (pipeline: string) => {
    for (const ref of ['shop-api', 'warehouse']) {
      await call(
        'PUT',
        `/organizations/acme/projects/shop/environments/staging/pipelines/${pipeline}/data-source-bindings/${ref}`,
        { data_source_slug: ref },
      );
    }
  };
  const pushed = async (pipeline: string, file: string) => {
    const r = await cli(['pipelines', 'push', ...scope, '--pipeline', pipeline, '--file', file, '--create']);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.match(/spec_hash: ([0-9a-f]{64})/)![1];
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-pipelines-'));
    sink = await createSinkDatabase(SINK_DB);
    await pgQuery(
      SINK_DB,
      `create table orders_strict (id bigint primary key, name text, region text check (region = 'nowhere'))`,
    );
    records = await startRecordsApi({ perResponse: 5 });
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme')).api_key;
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const org = '/organizations/acme';
    await call('POST', `${org}/data-sources`, {
      type: 'http',
      name: 'Shop API',
      slug: 'shop-api',
      config: { base_url: records.url, allow_private_hosts: true },
      credentials: {},
    });
    const u = new URL(PG_ADMIN);
    await call('POST', `${org}/data-sources`, {
      type: 'postgres',
      name: 'Warehouse',
      slug: 'warehouse',
      config: {
        host: u.hostname,
        port: Number(u.port || 5432),
        database: SINK_DB,
        user: decodeURIComponent(u.username || 'postgres'),
        allow_private_hosts: true,
      },
      credentials: { password: decodeURIComponent(u.password) || 'unused' },
    });
    await call('POST', `${org}/projects`, { name: 'Shop', slug: 'shop' });
    await call('POST', `${org}/environments`, { name: 'Staging', slug: 'staging' });
    await call('PUT', `${org}/projects/shop/environments/staging`);
  });
  afterAll(async () => {
    await t?.close();
    await records?.close();
    await sink?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('pushes, validates, deploys and executes with --wait: exit 0, rows loaded, input never shown', async () => {
    const file = specFile('orders.json', ordersSpec());
    const first = await cli([
      'pipelines',
      'push',
      ...scope,
      '--pipeline',
      'orders',
      '--name',
      'Orders',
      '--file',
      file,
      '--create',
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/created pipeline orders\nspec_hash: [0-9a-f]{64}\nnew version/);
    const again = await cli([
      'pipelines',
      'push',
      ...scope,
      '--pipeline',
      'orders',
      '--file',
      file,
      '--json',
    ]);
    expect(again.code, again.stderr).toBe(0);
    const version = JSON.parse(again.stdout);
    expect(version).toMatchObject({ created: false, pipeline_created: false });
    const hash: string = version.spec_hash;
    expect(first.stdout).toContain(hash);

    // Before the bindings: invalid, findings as a table, exit 1.
    const unbound = await cli(['pipelines', 'validate', ...env, '--pipeline', 'orders', '--spec-hash', hash]);
    expect(unbound.code).toBe(1);
    expect(unbound.stdout).toMatch(/^SEVERITY\s+CODE\s+PATH\s+MESSAGE/);
    expect(unbound.stdout).toMatch(/error\s+REF_UNBOUND\s+steps\[0\]\.data_source_ref\s+/);
    expect(unbound.stdout).toMatch(/invalid \(2 errors\): validation \S+ of [0-9a-f]{64} in staging/);
    expect(unbound.stderr).toMatch(/not valid in staging/);
    const refused = await cli(['pipelines', 'deploy', ...env, '--pipeline', 'orders', '--spec-hash', hash]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/CONFLICT/);

    await bind('orders');
    const valid = await cli(['pipelines', 'validate', ...env, '--pipeline', 'orders', '--file', file]);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
    expect(valid.stdout).toMatch(/^valid: validation \S+ of [0-9a-f]{64} in staging/);
    const deployed = await cli([
      'pipelines',
      'deploy',
      ...env,
      '--pipeline',
      'orders',
      '--spec-hash',
      hash.slice(0, 12),
    ]);
    expect(deployed.code, deployed.stderr).toBe(0);
    expect(deployed.stdout).toContain(`deployed ${hash} to staging`);

    const run = await cli([
      'pipelines',
      'execute',
      ...env,
      '--pipeline',
      'orders',
      '--input',
      `region=${CANARY}`,
      '--run-slug',
      'first',
      '--wait',
      '--interval',
      '0.3',
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^run first {2}orders in staging {2}/m);
    expect(run.stdout).toMatch(
      / {2}orders {2}succeeded {2}rows in 0 out 5 {2}bytes in \d+ B out \d+ \S+ {2}\d+\.\ds/,
    );
    expect(run.stdout).toMatch(/ {2}load {4}succeeded {2}rows in 5 out 5 {2}/);
    expect(run.stdout).toMatch(/run first {2}orders in staging {2}succeeded {2}attempt 1/);
    expect(run.stdout).toMatch(/info {2}orders: GET to 127\.0\.0\.1:\d+ answered HTTP 200/);
    expect(run.stdout + run.stderr).not.toContain(CANARY);
    expect(records.requests.find((r) => r.run === 'first')?.query.region).toBe(CANARY);
    const rows = await pgQuery(SINK_DB, 'select id from orders order by id');
    expect(rows.map((r) => Number(r.id))).toEqual([1, 2, 3, 4, 5]);
  });

  it('refuses malformed --input without repeating it', async () => {
    const secret = `Secret${randomBytes(6).toString('hex')}`;
    for (const arg of [secret, `bad key=${secret}`]) {
      const r = await cli(['pipelines', 'execute', ...env, '--pipeline', 'orders', '--input', arg]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/--input #1/);
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
    const json = path.join(dir, 'input.json');
    fs.writeFileSync(json, `{"region": ${secret}}`);
    const r = await cli(['pipelines', 'execute', ...env, '--pipeline', 'orders', '--input-json', json]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is not valid JSON/);
    expect(r.stdout + r.stderr).not.toContain(secret);
  });

  it('watches a run to its end in plain lines and lists runs as JSON', async () => {
    // Slow enough that the watch usually sees the run in progress.
    records.set({ delayMs: 400 });
    const started = await cli(
      [
        'pipelines',
        'execute',
        ...env,
        '--pipeline',
        'orders',
        '--input-json',
        '-',
        '--run-slug',
        'second',
        '--json',
      ],
      '{"region": "eu"}',
    );
    expect(started.code, started.stderr).toBe(0);
    expect(JSON.parse(started.stdout)).toMatchObject({
      slug: 'second',
      created: true,
      input_keys: ['region'],
    });

    const watched = await cli(['runs', 'watch', ...env, 'second', '--interval', '0.3']);
    records.set({ delayMs: 0 });
    expect(watched.code, watched.stdout + watched.stderr).toBe(0);
    expect(watched.stdout).not.toContain('\x1b[');
    expect(watched.stdout).toMatch(/^ {2}orders {2}succeeded {2}rows in 0 out 5 /m);
    expect(watched.stdout).toMatch(/^ {2}load {4}succeeded {2}rows in 5 out 5 /m);
    expect(watched.stdout).toMatch(
      /^run second {2}orders in staging {2}succeeded {2}attempt 1 {2}\d+\.\ds$/m,
    );

    const json = await cli(['runs', 'watch', ...env, 'second', '--json']);
    expect(json.code).toBe(0);
    const polls = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(polls).toHaveLength(1);
    expect(polls[0].run).toMatchObject({ slug: 'second', state: 'succeeded' });
    expect(polls[0].logs.length).toBeGreaterThan(0);

    const listed = await cli([
      'runs',
      'list',
      ...env,
      '--pipeline',
      'orders',
      '--limit',
      '1',
      '--all',
      '--json',
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    const page = JSON.parse(listed.stdout);
    expect(page.runs.map((r: { slug: string }) => r.slug)).toEqual(['second', 'first']);
    expect(page.runs[0]).toMatchObject({
      pipeline_slug: 'orders',
      state: 'succeeded',
      spec_hash: expect.any(String),
    });
    const table = await cli(['runs', 'list', ...env, '--state', 'succeeded']);
    expect(table.stdout).toMatch(/^SLUG\s+PIPELINE\s+STATE/);
    expect(table.stdout).toMatch(/second\s+orders\s+succeeded\s+api\s+1/);
    // Rows written by the sink (5), not the sum over every step (source 5 + sink 5).
    expect(table.stdout).toMatch(/^SLUG\s+PIPELINE\s+.*\s+ROWS WRITTEN\s+ERROR$/m);
    expect(table.stdout).toMatch(/^second\s+orders\s+succeeded\s+api\s+1\s+\S+\s+\S+\s+5\s+-$/m);
    expect((await pgQuery(SINK_DB, 'select count(*)::int as n from orders'))[0].n).toBe(10);
  });

  it('exits 1 when the run fails (a sink constraint), with the step error', async () => {
    const spec = ordersSpec();
    (spec.steps[1].operation as { write: { table: string } }).write.table = 'orders_strict';
    const hash = await pushed('strict', specFile('strict.json', spec));
    await bind('strict');
    expect(
      (await cli(['pipelines', 'validate', ...env, '--pipeline', 'strict', '--spec-hash', hash])).code,
    ).toBe(0);
    expect(
      (await cli(['pipelines', 'deploy', ...env, '--pipeline', 'strict', '--spec-hash', hash])).code,
    ).toBe(0);
    const r = await cli([
      'pipelines',
      'execute',
      ...env,
      '--pipeline',
      'strict',
      '--input',
      'region=eu',
      '--run-slug',
      'strict-1',
      '--wait',
      '--interval',
      '0.3',
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^ {2}load {4}failed {2}.*QUERY_FAILED: .*check constraint/m);
    expect(r.stderr).toMatch(/^sluice: run strict-1 failed: STEP_FAILED: /);
    expect((await pgQuery(SINK_DB, 'select count(*)::int as n from orders_strict'))[0].n).toBe(0);
  });

  it('cancels a running run; watching it then exits 1', async () => {
    records.set({ perResponse: 200, delayMs: 100 });
    try {
      const exec = startCli(
        [
          ...['pipelines', 'execute', ...env],
          '--pipeline',
          'orders',
          '--input',
          'region=eu',
          '--run-slug',
          'slow',
        ],
        { env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token } },
      );
      expect((await exec.exited).code).toBe(0);
      await records.waitForRequest((r) => r.run === 'slow');
      const watch = startCli(['runs', 'watch', ...env, 'slow', '--interval', '0.3'], {
        env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token },
      });
      await watch.waitForStdout(/orders {2}running/);
      await waitUntil(
        async () =>
          (
            await t.call('GET', '/organizations/acme/projects/shop/environments/staging/runs/slow', { token })
          ).json(),
        (run) => run.state === 'running',
      );
      const cancel = await cli(['runs', 'cancel', ...env, 'slow']);
      expect(cancel.code, cancel.stderr).toBe(0);
      expect(cancel.stdout).toMatch(/^run slow canceling/);
      const watched = await watch.exited;
      expect(watched.code, watched.stdout + watched.stderr).toBe(1);
      expect(watched.stdout).toMatch(/run slow .* canceled {2}attempt 1/);
      expect(watched.stderr).toMatch(/^sluice: run slow canceled/);
      const again = await cli(['runs', 'cancel', ...env, 'slow']);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/CONFLICT/);
    } finally {
      records.set({ perResponse: 5, delayMs: 0 });
    }
  });
});
