import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BigQueryFake, startBigQueryFake } from '../peers/bigquery-api';
import { type TestServiceAccount, testServiceAccount } from '../peers/google-oauth';
import {
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  pgDataSource,
  runToEnd,
  stepOf,
} from '../pipelines/support';
import { startTestApp, type TestApp } from '../support/app';
import { dumpStore, pgQuery } from '../support/runs';

// Issue 6 acceptance for BigQuery over the API: test-connection (success, bad key, revoked
// token, missing permission, quota and rate limit), schema import, a saved query, 10,000 rows
// BigQuery → PostgreSQL and PostgreSQL → BigQuery (insert_rows), and the service account's
// private key kept out of every response, error, log and stored record. BigQuery is the fake
// in test/peers/bigquery-api.ts, reached through the real SDK with SLUICE_GOOGLE_API_ROOT.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_bq_${id}`;
const N = 10_000;

let fake: BigQueryFake;
let sa: TestServiceAccount;
let t: TestApp;
let owner: string;

const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });
/** Every test key; none may show up anywhere. */
const keys: string[] = [];
const keyLines = () => keys.flatMap((k) => k.split('\n').filter((l) => l.length > 40));

async function addBigQuery(slug: string, json: string, config: Record<string, unknown> = {}) {
  const res = await call('POST', `${ORG}/data-sources`, {
    type: 'bigquery',
    name: slug,
    slug,
    config: { project_id: 'test-project', default_dataset: 'shop', timeout_seconds: 30, ...config },
    credentials: { service_account_json: json },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res;
}

const testConnection = async (slug: string) => {
  const res = await call('POST', `${ORG}/data-sources/${slug}/test-connection`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

const events = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    name: `event-${i + 1}`,
    score: (i % 100) / 4,
    region: i % 2 ? 'eu' : 'us',
  }));

beforeAll(async () => {
  fake = await startBigQueryFake();
  sa = testServiceAccount(fake.tokenUri);
  keys.push(sa.privateKey);
  fake.oauth.trust(sa.email, sa.publicKey);
  fake.createTable(
    'shop',
    'events',
    [
      { name: 'id', type: 'INTEGER', mode: 'REQUIRED' },
      { name: 'name', type: 'STRING' },
      { name: 'score', type: 'FLOAT' },
      { name: 'region', type: 'STRING' },
    ],
    events(N),
  );
  fake.createTable('shop', 'loaded', [
    { name: 'id', type: 'INTEGER' },
    { name: 'name', type: 'STRING' },
    { name: 'qty', type: 'INTEGER' },
  ]);
  await pgQuery('postgres', `drop database if exists ${PG_DB} with (force)`);
  await pgQuery('postgres', `create database ${PG_DB}`);
  await pgQuery(
    PG_DB,
    `create table orders as select g as id, 'order-' || g as name, g % 7 as qty from generate_series(1, ${N}) g`,
  );
  t = await startTestApp({
    worker: true,
    env: { SLUICE_GOOGLE_API_ROOT: fake.url, SLUICE_EGRESS_ALLOW_CIDRS: '127.0.0.1/32' },
  });
  owner = (await t.bootstrap('acme')).api_key;
  await createProjectAndEnvironment((m, u, b) => call(m, u, b));
  await addBigQuery('wh', sa.json);
  const pg = await call('POST', `${ORG}/data-sources`, pgDataSource('pg', PG_DB));
  expect(pg.statusCode, pg.body).toBe(201);
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
  await pgQuery('postgres', `drop database if exists ${PG_DB} with (force)`).catch(() => {});
});

describe('BigQuery connector over the API', () => {
  it('tests the connection and reports each failure with its code', async () => {
    expect(await testConnection('wh')).toMatchObject({ ok: true, error: null });

    const wrongKey = testServiceAccount(fake.tokenUri, sa.email);
    keys.push(wrongKey.privateKey);
    await addBigQuery('wh-badkey', wrongKey.json);
    const denied = testServiceAccount(fake.tokenUri, 'reader@test-project.iam.gserviceaccount.com');
    fake.oauth.trust(denied.email, denied.publicKey);
    fake.deny(denied.email);
    await addBigQuery('wh-denied', denied.json);
    const foreign = JSON.stringify({ ...JSON.parse(sa.json), token_uri: 'https://tokens.example.com/token' });
    await addBigQuery('wh-foreign', foreign);

    expect((await testConnection('wh-badkey')).error.code).toBe('AUTHENTICATION_FAILED');
    expect((await testConnection('wh-denied')).error.code).toBe('PERMISSION_DENIED');
    expect((await testConnection('wh-foreign')).error).toMatchObject({ code: 'AUTHENTICATION_FAILED' });
    fake.oauth.rejectTokens(true);
    expect((await testConnection('wh')).error).toMatchObject({ code: 'AUTHENTICATION_FAILED' });
    fake.oauth.rejectTokens(false);
    fake.failNext(1, 'quotaExceeded');
    expect((await testConnection('wh')).error.message).toContain('quotaExceeded');
    fake.failNext(1, 'rateLimitExceeded');
    expect((await testConnection('wh')).error.message).toContain('rateLimitExceeded');
    expect(await testConnection('wh')).toMatchObject({ ok: true });
    const stored = (await call('GET', `${ORG}/data-sources/wh-badkey`)).json();
    expect(stored.test_error).toContain('refused the service account');
  });

  it('imports the schema: datasets, tables and fields', async () => {
    const res = await call('POST', `${ORG}/data-sources/wh/schema-import`);
    expect(res.statusCode, res.body).toBe(202);
    let ds: any;
    for (let i = 0; i < 100; i++) {
      ds = (await call('GET', `${ORG}/data-sources/wh`)).json();
      if (ds.schema_status !== 'importing') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ds.schema_status).toBe('ready');
    expect(ds.schema.schema_type).toBe('relational');
    expect(ds.schema.tables).toContainEqual({
      schema: 'shop',
      name: 'events',
      columns: [
        { name: 'id', type: 'INTEGER' },
        { name: 'name', type: 'STRING' },
        { name: 'score', type: 'FLOAT' },
        { name: 'region', type: 'STRING' },
      ],
    });
  });

  it('executes a saved query with named parameters and the bytes cap', async () => {
    const saved = await call('POST', `${ORG}/queries`, {
      name: 'eu-events',
      slug: 'eu-events',
      data_source_slug: 'wh',
      statement: {
        type: 'bigquery',
        operation: 'query',
        sql: 'SELECT id, name FROM shop.events WHERE region = {{region}} AND id <= {{max_id}} ORDER BY id',
        maximum_bytes_billed: 100_000_000,
      },
    });
    expect(saved.statusCode, saved.body).toBe(201);
    const res = await call('POST', `${ORG}/queries/eu-events:execute`, {
      parameters: { region: "eu' OR 1=1 --", max_id: 10 },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'succeeded', result_type: 'sql', result: { rows: [] } });
    const ok = await call('POST', `${ORG}/queries/eu-events:execute`, {
      parameters: { region: 'eu', max_id: 6 },
    });
    const body = ok.json();
    expect(JSON.stringify(body)).toContain('event-6');
    expect(body.result.columns).toEqual([
      { name: 'id', type: 'bigint' },
      { name: 'name', type: 'text' },
    ]);
    expect(body.result.rows).toEqual([
      [2, 'event-2'],
      [4, 'event-4'],
      [6, 'event-6'],
    ]);

    await call('POST', `${ORG}/queries`, {
      name: 'too-big',
      slug: 'too-big',
      data_source_slug: 'wh',
      statement: {
        type: 'bigquery',
        operation: 'query',
        sql: 'SELECT * FROM shop.events',
        maximum_bytes_billed: 1000,
      },
    });
    const big = await call('POST', `${ORG}/queries/too-big:execute`, { parameters: {} });
    expect(big.json()).toMatchObject({ status: 'failed', error: { code: 'QUERY_FAILED' } });
    expect(big.json().error.message).toContain('maximum_bytes_billed');
  });

  it(`moves ${N} rows BigQuery → PostgreSQL and PostgreSQL → BigQuery`, async () => {
    const pe = (m: string, u: string, b?: unknown) => call(m, u, b);
    await deployPipeline(pe, {
      pipeline: 'bq-to-pg',
      spec: {
        steps: [
          {
            slug: 'events',
            kind: 'source',
            data_source_ref: 'wh',
            operation: { operation_type: 'sql', sql: 'SELECT * FROM shop.events' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'pg',
            operation: {
              operation_type: 'sql',
              write: { table: 'events', mode: 'insert', create_table: true },
            },
          },
        ],
        edges: [{ from: 'events', to: 'load' }],
      },
      bindings: { wh: 'wh', pg: 'pg' },
    });
    const run = await runToEnd(pe, 'bq-to-pg', {}, 120_000);
    expect(run.state, JSON.stringify(run)).toBe('succeeded');
    expect(stepOf(run, 'load').rows_in).toBe(N);
    const [pgSum] = await pgQuery(
      PG_DB,
      'select count(*)::int as n, sum(id)::bigint::text as s, count(distinct name)::int as d from events',
    );
    expect(pgSum).toEqual({ n: N, s: String((N * (N + 1)) / 2), d: N });
    // The result arrived in pages: getQueryResults followed pageToken.
    expect(fake.requests.filter((r) => r.path.includes('/queries/')).length).toBeGreaterThanOrEqual(3);

    await deployPipeline(pe, {
      pipeline: 'pg-to-bq',
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'pg',
            operation: { operation_type: 'sql', sql: 'SELECT id, name, qty FROM orders ORDER BY id' },
          },
          {
            slug: 'to-bq',
            kind: 'sink',
            data_source_ref: 'wh',
            operation: { operation_type: 'sql', write: { table: 'shop.loaded', mode: 'insert' } },
          },
        ],
        edges: [{ from: 'orders', to: 'to-bq' }],
      },
      bindings: { wh: 'wh', pg: 'pg' },
    });
    const load = await runToEnd(pe, 'pg-to-bq', {}, 120_000);
    expect(load.state, JSON.stringify(load)).toBe('succeeded');
    const table = fake.table('shop', 'loaded');
    expect(table?.rows.length).toBe(N);
    expect(table?.rows.reduce((s, r) => s + Number(r.id), 0)).toBe((N * (N + 1)) / 2);
    expect(table?.insertIds.size).toBe(N);
    expect([...(table?.insertIds ?? [])][0]).toBe(`${load.slug}-to-bq-0`);
    const batches = fake.requests.filter((r) => r.path.endsWith('/insertAll'));
    expect(batches.length).toBe(N / 500);
    expect(Math.max(...batches.map((b) => b.rows ?? 0))).toBe(500);
  });

  it('fails a run whose key Google refuses, with a sanitized error', async () => {
    const pe = (m: string, u: string, b?: unknown) => call(m, u, b);
    await deployPipeline(pe, {
      pipeline: 'bad-key',
      spec: {
        steps: [
          {
            slug: 'events',
            kind: 'source',
            data_source_ref: 'wh',
            operation: { operation_type: 'sql', sql: 'SELECT id FROM shop.events' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'pg',
            operation: {
              operation_type: 'sql',
              write: { table: 'bad_key', mode: 'insert', create_table: true },
            },
          },
        ],
        edges: [{ from: 'events', to: 'load' }],
      },
      bindings: { wh: 'wh-badkey', pg: 'pg' },
    });
    const run = await runToEnd(pe, 'bad-key', {}, 60_000);
    expect(run.state).toBe('failed');
    expect(JSON.stringify(run)).toContain('AUTHENTICATION_FAILED');
  });

  it('never shows or stores the private key', async () => {
    const texts = [
      (await call('GET', `${ORG}/data-sources/wh`)).body,
      (await call('GET', `${ORG}/data-sources?limit=100`)).body,
      (await call('GET', `${ORG}/queries/too-big/executions`)).body,
      (await call('GET', `${ORG}/projects/shop/environments/staging/runs?limit=100`)).body,
      t.logs(),
      await dumpStore((q) => t.rt.deps.store.executeSql(q)),
    ];
    for (const text of texts) {
      for (const line of keyLines()) expect(text.includes(line)).toBe(false);
      expect(text).not.toContain('PRIVATE KEY');
    }
  });
});
