import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Call,
  createDataSource,
  createMysqlDatabase,
  createProjectAndEnvironment,
  deployPipeline,
  mysqlDataSource,
  ORG,
  ok,
  PE,
  pgDataSource,
  runToEnd,
  stepOf,
} from '../../../../../test/pipelines/support';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { odcsErrors } from '../../../../../test/support/odcs';
import { createSinkDatabase, pgQuery, waitUntil } from '../../../../../test/support/runs';

// Issue 12 acceptance for data contracts on a real PostgreSQL source and sink: revisions with
// digests and the backward check, ODCS export, validation's CONTRACT_BROKEN, and runs whose
// rows break null_values or duplicate_values failing before commit with nothing written.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const SRC = `sluice_contract_src_${id}`;
const SINK = `sluice_contract_sink_${id}`;
const CONTRACTS = `${ORG}/projects/shop/contracts`;

const spec = (sql: string) => ({
  steps: [
    { slug: 'src', kind: 'source', data_source_ref: 'crm', operation: { operation_type: 'sql', sql } },
    {
      slug: 'load',
      kind: 'sink',
      data_source_ref: 'warehouse',
      operation: {
        operation_type: 'sql',
        write: { table: 'people_out', mode: 'insert', create_table: true },
      },
    },
  ],
  edges: [{ from: 'src', to: 'load' }],
});

const r1 = {
  columns: [
    { name: 'id', type: 'integer', nullable: false, unique: true, primary_key: true },
    { name: 'email', type: 'varchar', nullable: false },
  ],
  quality: [
    { metric: 'row_count', must_be_greater_than: 0 },
    { metric: 'null_values', column: 'email', must_be: 0 },
    { metric: 'duplicate_values', columns: ['id'], must_be: 0 },
  ],
  freshness: null,
};

describe('data contracts', () => {
  let t: TestApp;
  let token: string;
  let sink: { drop(): Promise<unknown> };
  let shop: Awaited<ReturnType<typeof createMysqlDatabase>>;
  const call: Call = (method, url, body) => t.call(method, url, { token, body });
  const written = async () =>
    (await pgQuery(SINK, `select to_regclass('people_out') is not null as e`))[0].e
      ? Number((await pgQuery(SINK, 'select count(*)::int as n from people_out'))[0].n)
      : 0;
  const setRows = async (rows: string) => {
    await pgQuery(SRC, 'truncate people');
    await pgQuery(SRC, `insert into people values ${rows}`);
  };

  beforeAll(async () => {
    await pgQuery('postgres', `drop database if exists ${SRC} with (force)`);
    await pgQuery('postgres', `create database ${SRC}`);
    await pgQuery(SRC, 'create table people (id int, email varchar(100))');
    sink = await createSinkDatabase(SINK);
    // MariaDB's schema import keeps precision and scale (`decimal(10,2)`).
    shop = await createMysqlDatabase(`sluice_contract_shop_${id}`);
    await shop.query('create table prices (id int, amount decimal(10,2))');
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, pgDataSource('crm', SRC));
    await createDataSource(call, pgDataSource('warehouse', SINK));
    await createProjectAndEnvironment(call);
    await deployPipeline(call, {
      pipeline: 'people',
      spec: spec('SELECT id, email FROM people'),
      bindings: { crm: 'crm', warehouse: 'warehouse' },
    });
    await createDataSource(call, mysqlDataSource('shop', `sluice_contract_shop_${id}`));
    for (const ds of ['crm', 'shop']) {
      await ok(call('POST', `${ORG}/data-sources/${ds}/schema-import`), 202);
      await waitUntil(
        async () => (await call('GET', `${ORG}/data-sources/${ds}`)).json(),
        (x: any) => x.schema_status === 'ready',
      );
    }
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await sink?.drop();
    await shop?.drop();
    await pgQuery('postgres', `drop database if exists ${SRC} with (force)`);
  });

  it('creates contracts and immutable revisions, refuses breaking backward revisions and exports ODCS', async () => {
    const c = await ok(
      call('POST', CONTRACTS, {
        name: 'People out',
        slug: 'people-out',
        target: { pipeline_slug: 'people', step_slug: 'load' },
      }),
      201,
    );
    expect(c).toMatchObject({
      slug: 'people-out',
      target: { pipeline_slug: 'people', step_slug: 'load' },
      latest_revision_slug: null,
    });
    const bad = await call('POST', CONTRACTS, {
      name: 'x',
      target: { pipeline_slug: 'people', step_slug: 'src' },
    });
    expect(bad.statusCode).toBe(400);

    const rev = await ok(call('POST', `${CONTRACTS}/people-out/revisions`, r1), 201);
    expect(rev).toMatchObject({
      slug: 'r1',
      based_on: null,
      compatibility: 'backward',
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect((await ok(call('GET', `${CONTRACTS}/people-out`), 200)).latest_revision_slug).toBe('r1');

    const breaking = await call('POST', `${CONTRACTS}/people-out/revisions`, {
      ...r1,
      columns: [r1.columns[0]],
    });
    expect(breaking.statusCode).toBe(409);
    expect(breaking.json().error.code).toBe('CONFLICT');
    expect(breaking.json().error.message).toMatch(/contract_column_removed email/);
    expect(breaking.json().error.validation_errors).toEqual([
      expect.objectContaining({ path: 'email', code: 'contract_column_removed' }),
    ]);

    // A safe revision (a new optional column is not promised by the pipeline yet, so its impact report says so).
    const r2 = await ok(
      call('POST', `${CONTRACTS}/people-out/revisions`, {
        ...r1,
        columns: [...r1.columns, { name: 'phone', type: 'text' }],
      }),
      201,
    );
    expect(r2).toMatchObject({ slug: 'r2', based_on: 'r1' });
    expect(r2.digest).not.toBe(rev.digest);
    const reports = (await ok(call('GET', `${ORG}/projects/shop/drift-reports`), 200)).reports;
    expect(reports[0]).toMatchObject({
      report_type: 'contract_impact',
      pipeline_slug: 'people',
      status: 'open',
      severity: 'breaking',
    });
    expect(reports[0].impacts.find((i: any) => i.kind === 'sink').message).toMatch(/phone is missing/);
    expect(reports[1]).toMatchObject({
      report_type: 'contract_impact',
      status: 'superseded',
      severity: 'safe',
    });

    // Back to r1's columns, accepted on purpose.
    await ok(
      call('POST', `${CONTRACTS}/people-out/revisions`, { ...r1, slug: 'r3', compatibility: 'none' }),
      201,
    );
    const odcs = await ok(call('GET', `${CONTRACTS}/people-out/revisions/r1?format=odcs`), 200);
    expect(odcsErrors(odcs)).toEqual([]);
    expect(odcs).toMatchObject({
      apiVersion: 'v3.1.0',
      kind: 'DataContract',
      id: 'people-out',
      version: 'r1',
    });
    expect(odcs.schema[0].properties[0]).toMatchObject({
      name: 'id',
      required: true,
      unique: true,
      primaryKey: true,
    });
    expect(odcs.schema[0].properties[1].quality).toEqual([
      { type: 'library', metric: 'nullValues', mustBe: 0 },
    ]);
    expect(
      (await ok(call('GET', `${CONTRACTS}/people-out/revisions`), 200)).revisions.map((r: any) => r.slug),
    ).toEqual(['r3', 'r2', 'r1']);
  });

  it('fails validation of a pipeline edit that drops a promised column', async () => {
    const ok1 = await ok(
      call('POST', `${PE}/pipeline-validation`, {
        pipeline_slug: 'people',
        spec: spec('SELECT id, email FROM people'),
      }),
      [200, 201],
    );
    expect(ok1.valid, JSON.stringify(ok1.findings)).toBe(true);
    const v = await ok(
      call('POST', `${PE}/pipeline-validation`, {
        pipeline_slug: 'people',
        spec: spec('SELECT id FROM people'),
      }),
      [200, 201],
    );
    expect(v.valid).toBe(false);
    expect(v.findings).toEqual([
      expect.objectContaining({
        code: 'CONTRACT_BROKEN',
        path: 'steps[1]',
        severity: 'error',
        message: expect.stringMatching(/email is missing/),
      }),
    ]);
  });

  it('compares types as drift does: decimal accepts DECIMAL(10,2), a wider precision is a widening', async () => {
    const prices = {
      ...spec('SELECT id, amount FROM prices'),
    };
    (prices.steps[1].operation as any).write = { table: 'prices_out', mode: 'insert', create_table: true };
    await deployPipeline(call, {
      pipeline: 'prices',
      spec: prices,
      bindings: { crm: 'shop', warehouse: 'warehouse' },
    });
    await ok(
      call('POST', CONTRACTS, {
        name: 'Prices out',
        slug: 'prices-out',
        target: { pipeline_slug: 'prices', step_slug: 'load' },
      }),
      201,
    );
    const columns = (amount: string) => [
      { name: 'ID', type: 'INT4' },
      { name: 'amount', type: amount },
    ];
    await ok(call('POST', `${CONTRACTS}/prices-out/revisions`, { columns: columns('decimal') }), 201);
    const v = await ok(
      call('POST', `${PE}/pipeline-validation`, { pipeline_slug: 'prices', spec: prices }),
      [200, 201],
    );
    expect(v.findings).toEqual([]);
    expect(v.valid).toBe(true);

    // Narrowing the promise to the output's own type is breaking for readers of r1, so it needs
    // compatibility none; widening it afterwards is accepted under backward.
    const narrowed = await call('POST', `${CONTRACTS}/prices-out/revisions`, {
      columns: columns('DECIMAL(10,2)'),
    });
    expect(narrowed.statusCode).toBe(409);
    expect(narrowed.json().error.message).toMatch(/contract_type_changed amount/);
    await ok(
      call('POST', `${CONTRACTS}/prices-out/revisions`, {
        columns: columns('numeric(10, 2)'),
        compatibility: 'none',
      }),
      201,
    );
    const widened = await ok(
      call('POST', `${CONTRACTS}/prices-out/revisions`, { columns: columns('DECIMAL(12,2)') }),
      201,
    );
    expect(widened).toMatchObject({ slug: 'r3', based_on: 'r2', compatibility: 'backward' });
    // The output (DECIMAL(10,2)) no longer matches the promised DECIMAL(12,2): the check says so.
    const after = await ok(
      call('POST', `${PE}/pipeline-validation`, { pipeline_slug: 'prices', spec: prices }),
      [200, 201],
    );
    expect(after.findings).toEqual([
      expect.objectContaining({
        code: 'CONTRACT_BROKEN',
        message: expect.stringMatching(/amount is DECIMAL\(12,2\), the output is DECIMAL\(10,2\)/),
      }),
    ]);
  });

  it('fails a run whose rows break null_values or duplicate_values before commit, nothing written', async () => {
    await setRows(`(1, 'a@x'), (2, null)`);
    const nulls = await runToEnd(call, 'people', { run_slug: 'nulls' });
    expect(nulls.state).toBe('failed');
    expect(stepOf(nulls, 'load').error).toMatchObject({
      code: 'CONTRACT_VIOLATED',
      message: expect.stringMatching(/null_values\(email\) = 1/),
    });
    expect(nulls.contract_checks).toEqual([
      expect.objectContaining({
        step_slug: 'load',
        contract_slug: 'people-out',
        revision_slug: 'r3',
        passed: false,
        rows: 2,
      }),
    ]);
    expect(await written()).toBe(0);

    await setRows(`(1, 'a@x'), (1, 'b@x')`);
    const dups = await runToEnd(call, 'people', { run_slug: 'dups' });
    expect(stepOf(dups, 'load').error).toMatchObject({
      code: 'CONTRACT_VIOLATED',
      message: expect.stringMatching(/duplicate_values\(id\) = 1/),
    });
    expect(await written()).toBe(0);

    await setRows(`(1, 'a@x'), (2, 'b@x')`);
    const good = await runToEnd(call, 'people', { run_slug: 'good' });
    expect(good.state, JSON.stringify(good)).toBe('succeeded');
    expect(good.contract_checks[0]).toMatchObject({ passed: true, rows: 2 });
    expect(good.contract_checks[0].metrics.map((m: any) => [m.metric, m.value, m.passed])).toEqual([
      ['row_count', 2, true],
      ['null_values', 0, true],
      ['duplicate_values', 0, true],
    ]);
    expect(await written()).toBe(2);
  });
});
