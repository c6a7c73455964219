import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  pgDataSource,
} from '../../../test/pipelines/support';
import { startTestApp, type TestApp } from '../../../test/support/app';
import { runCli } from '../../../test/support/cli';
import { odcsErrors } from '../../../test/support/odcs';
import { createSinkDatabase, pgQuery, waitUntil } from '../../../test/support/runs';

// `sluice drift` and `sluice contracts` as a user runs them: the real CLI in a child process
// against a listening API host, a PostgreSQL source whose schema changes, contract revisions
// from YAML files (Sluice's shape and ODCS v3), readable tables and --json.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const SRC = `sluice_cli_drift_src_${id}`;
const SINK = `sluice_cli_drift_sink_${id}`;
const scope = ['--org', 'acme', '--project', 'shop'];

describe('sluice drift and contracts', () => {
  let t: TestApp;
  let token: string;
  let baseUrl: string;
  let dir: string;
  let sink: { drop(): Promise<unknown> };
  const call: Call = (method, url, body) => t.call(method, url, { token, body });
  const cli = (args: string[]) => runCli(args, { env: { SLUICE_BASE_URL: baseUrl, SLUICE_TOKEN: token } });
  const file = (name: string, value: unknown) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, stringify(value));
    return f;
  };
  const importSchema = async () => {
    await ok(call('POST', `${ORG}/data-sources/crm/schema-import`), 202);
    await waitUntil(
      async () => (await call('GET', `${ORG}/data-sources/crm`)).json(),
      (x: any) => x.schema_status === 'ready',
    );
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-drift-'));
    await pgQuery('postgres', `drop database if exists ${SRC} with (force)`);
    await pgQuery('postgres', `create database ${SRC}`);
    await pgQuery(SRC, 'create table people (id int, email text, note text)');
    sink = await createSinkDatabase(SINK);
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme')).api_key;
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    await createDataSource(call, pgDataSource('crm', SRC));
    await createDataSource(call, pgDataSource('warehouse', SINK));
    await createProjectAndEnvironment(call);
    await deployPipeline(call, {
      pipeline: 'people',
      spec: {
        steps: [
          {
            slug: 'src',
            kind: 'source',
            data_source_ref: 'crm',
            operation: { operation_type: 'sql', sql: 'SELECT * FROM people' },
          },
          {
            slug: 'mail',
            kind: 'transform',
            operation: { operation_type: 'sql', sql: 'SELECT id, email FROM src' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'people_out', create_table: true } },
          },
        ],
        edges: [
          { from: 'src', to: 'mail' },
          { from: 'mail', to: 'load' },
        ],
      },
      bindings: { crm: 'crm', warehouse: 'warehouse' },
    });
    await importSchema();
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await sink?.drop();
    await pgQuery('postgres', `drop database if exists ${SRC} with (force)`);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates a contract and revisions from YAML, prints ODCS, and round-trips it', async () => {
    const created = await cli([
      'contracts',
      'create',
      ...scope,
      '--name',
      'People out',
      '--slug',
      'people-out',
      '--pipeline',
      'people',
      '--step',
      'load',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('created contract people-out on people/load');
    // Every rule kind, in the order the ODCS form lists them (table rules, then each column's),
    // so the round trip gives the same digest.
    const r1 = file('r1.yaml', {
      columns: [
        { name: 'id', type: 'integer', nullable: false, primary_key: true },
        { name: 'email', type: 'text' },
        { name: 'updated_at', type: 'timestamptz', nullable: false },
      ],
      quality: [
        { metric: 'row_count', must_be_greater_than: 0, must_be_less_than: 1000000 },
        { metric: 'duplicate_values', columns: ['id'], must_be: 0 },
        { metric: 'null_values', column: 'email', unit: 'percent', must_be_less_than: 5 },
      ],
      freshness: { column: 'updated_at', max_latency_seconds: 3600 },
    });
    const revised = await cli(['contracts', 'revise', ...scope, '--contract', 'people-out', '--file', r1]);
    expect(revised.code, revised.stderr).toBe(0);
    const digest = revised.stdout.match(/digest: (sha256:[0-9a-f]{64})/)![1];

    const odcs = await cli([
      'contracts',
      'revision',
      ...scope,
      '--contract',
      'people-out',
      '--revision',
      'r1',
      '--odcs',
    ]);
    expect(odcs.code, odcs.stderr).toBe(0);
    expect(odcs.stdout).toMatch(/^apiVersion: v3\.1\.0\nkind: DataContract/);
    expect(odcsErrors(parse(odcs.stdout))).toEqual([]);
    const roundTrip = path.join(dir, 'odcs.yaml');
    fs.writeFileSync(roundTrip, odcs.stdout);
    const again = await cli([
      'contracts',
      'revise',
      ...scope,
      '--contract',
      'people-out',
      '--file',
      roundTrip,
      '--slug',
      'r2',
      '--json',
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ slug: 'r2', based_on: 'r1', digest });

    const breaking = await cli([
      'contracts',
      'revise',
      ...scope,
      '--contract',
      'people-out',
      '--file',
      file('r3.yaml', { columns: [{ name: 'id', type: 'integer' }] }),
    ]);
    expect(breaking.code).not.toBe(0);
    expect(breaking.stderr).toMatch(/CONFLICT|contract_column_removed/);

    const shown = await cli(['contracts', 'get', ...scope, '--contract', 'people-out']);
    expect(shown.stdout).toMatch(/latest revision: r2/);
    expect(shown.stdout).toMatch(/^REVISION\s+BASED_ON\s+COMPATIBILITY/m);
    const listed = await cli(['contracts', 'list', ...scope, '--json']);
    expect(JSON.parse(listed.stdout).contracts.map((c: any) => c.slug)).toEqual(['people-out']);
  });

  it('lists, shows and previews drift reports as tables and JSON', async () => {
    const stored = (await ok(call('GET', `${ORG}/data-sources/crm`), 200)).schema;
    const candidate = structuredClone(stored);
    candidate.tables[0].columns = candidate.tables[0].columns.filter((c: any) => c.name !== 'email');
    const preview = await cli([
      'drift',
      'preview',
      ...scope,
      '--env',
      'staging',
      '--pipeline',
      'people',
      '--data-source',
      'crm',
      '--schema',
      file('candidate.yaml', candidate),
      '--json',
    ]);
    expect(preview.code, preview.stderr).toBe(0);
    expect(JSON.parse(preview.stdout)).toMatchObject({ severity: 'breaking' });

    await pgQuery(SRC, 'alter table people drop email');
    await importSchema();
    const list = await cli(['drift', 'list', ...scope, '--data-source', 'crm', '--json']);
    const [report] = JSON.parse(list.stdout).reports;
    expect(report).toMatchObject({ report_type: 'source_schema', severity: 'breaking' });
    expect({
      severity: report.severity,
      summary: report.summary,
      changes: report.changes,
      impacts: report.impacts,
    }).toEqual(JSON.parse(preview.stdout));

    const table = await cli(['drift', 'list', ...scope]);
    expect(table.stdout).toMatch(/^SLUG\s+TYPE\s+STATUS\s+SEVERITY\s+SUBJECT/);
    expect(table.stdout).toContain(report.slug);
    const shown = await cli(['drift', 'get', ...scope, '--report', report.slug]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/severity: breaking/);
    expect(shown.stdout).toMatch(/breaking\s+column_removed_referenced\s+public\.people\.email/);
    expect(shown.stdout).toMatch(/breaking\s+step\s+people\s+mail\s+step mail reads column email/);
    expect(shown.stdout).toMatch(
      /breaking\s+sink\s+people\s+load\s+sink load receives nothing from mail, which no longer binds; contract people-out cannot hold/,
    );
  });
});
