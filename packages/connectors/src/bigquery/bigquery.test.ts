import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BigQueryFake, startBigQueryFake } from '../../../../test/peers/bigquery-api';
import { type TestServiceAccount, testServiceAccount } from '../../../../test/peers/google-oauth';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { bigqueryConnector as bq } from './index';
import { compileBigQuery } from './params';

// The connector against the BigQuery fake, through @google-cloud/bigquery and Google's JWT
// flow (token_uri on the fake). Pipelines through the API are in test/connectors/.

let fake: BigQueryFake;
let sa: TestServiceAccount;
let ctx: ConnectorContext;
const config = { project_id: 'test-project', default_dataset: 'shop', timeout_seconds: 10 };
const conn = () => ({ config: { ...config }, credentials: { service_account_json: sa.json } });

const people = Array.from({ length: 25 }, (_, i) => ({ id: i + 1, name: `p${i + 1}`, score: (i + 1) * 1.5 }));

beforeAll(async () => {
  fake = await startBigQueryFake();
  sa = testServiceAccount(fake.tokenUri);
  fake.oauth.trust(sa.email, sa.publicKey);
  fake.createTable(
    'shop',
    'people',
    [
      { name: 'id', type: 'INTEGER', mode: 'REQUIRED' },
      { name: 'name', type: 'STRING' },
      { name: 'score', type: 'FLOAT' },
    ],
    people,
  );
  fake.createTable('shop', 'sink', [
    { name: 'id', type: 'INTEGER' },
    { name: 'name', type: 'STRING' },
  ]);
  ctx = {
    policy: egressPolicy('self_hosted', false, ['127.0.0.1/32']),
    limits: { ...defaultLimits, maxRows: 10 },
    endpoints: { googleApiRoot: fake.url },
  };
});
afterAll(() => fake?.close());

const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  expect(String(err.message)).not.toContain('PRIVATE KEY');
  return err as ConnectorError;
};

describe('bigquery connector', () => {
  it('turns {{placeholders}} into named parameters and refuses quoted ones', () => {
    expect(
      compileBigQuery("SELECT * FROM t WHERE a = {{a}} AND b = '{{x' AND c = {{runtime.run_slug}}").text,
    ).toBe("SELECT * FROM t WHERE a = @a AND b = '{{x' AND c = @sluice_t2");
    expect(() => compileBigQuery("SELECT '{{a}}'")).toThrow(/inside quotes/);
  });

  it('tests the connection through the JWT flow', async () => {
    await bq.test(conn(), ctx);
    expect(fake.oauth.tokensIssued()).toBeGreaterThan(0);
  });

  it('refuses a token_uri that is not Google or the operator root', async () => {
    const other = JSON.stringify({ ...JSON.parse(sa.json), token_uri: 'https://evil.example/token' });
    const err = await failure(bq.test({ config, credentials: { service_account_json: other } }, ctx));
    expect(err.code).toBe('AUTHENTICATION_FAILED');
    expect(err.message).toContain('token_uri');
  });

  it('runs a query with parameters, polling the job and paging its results', async () => {
    const r = await bq.query.execute(
      conn(),
      {
        type: 'bigquery',
        operation: 'query',
        sql: 'SELECT id, name FROM shop.people WHERE id > {{min}} ORDER BY id',
        maximum_bytes_billed: 1_000_000,
      },
      { min: 3 },
      ctx,
    );
    expect(r.result_type).toBe('sql');
    expect(r.truncated).toBe(true);
    expect(r.payload.columns).toEqual([
      { name: 'id', type: 'bigint' },
      { name: 'name', type: 'text' },
    ]);
    expect((r.payload.rows as unknown[][])[0]).toEqual([4, 'p4']);
    const job = fake.jobs[fake.jobs.length - 1].configuration.query;
    expect(job.query).toContain('@min');
    expect(job.queryParameters).toEqual([
      { name: 'min', parameterType: { type: 'INT64' }, parameterValue: { value: 3 } },
    ]);
    expect(job.maximumBytesBilled).toBe('1000000');
  });

  it('enforces maximum_bytes_billed (the connector caps the statement)', async () => {
    const err = await failure(
      bq.query.execute(
        { config: { ...config, maximum_bytes_billed: 10 }, credentials: { service_account_json: sa.json } },
        {
          type: 'bigquery',
          operation: 'query',
          sql: 'SELECT * FROM people',
          maximum_bytes_billed: 1_000_000,
        },
        {},
        ctx,
      ),
    );
    expect(err.message).toContain('maximum_bytes_billed');
    expect(fake.jobs[fake.jobs.length - 1].configuration.query.maximumBytesBilled).toBe('10');
  });

  it('inserts rows with insert ids and imports the schema', async () => {
    const r = await bq.query.execute(
      conn(),
      {
        type: 'bigquery',
        operation: 'insert_rows',
        table: 'sink',
        rows: '{{rows}}',
        insert_id_prefix: 'x-{{batch}}-',
      },
      {
        rows: [
          { id: 1, name: 'a' },
          { id: 2, name: 'b' },
        ],
        batch: 7,
      },
      ctx,
    );
    expect(r.payload.affected_rows).toBe(2);
    expect([...(fake.table('shop', 'sink')?.insertIds ?? [])]).toEqual(['x-7-0', 'x-7-1']);
    const bad = await failure(
      bq.query.execute(
        conn(),
        { type: 'bigquery', operation: 'insert_rows', table: 'sink', rows: [{ nope: 1 }] },
        {},
        ctx,
      ),
    );
    expect(bad.code).toBe('QUERY_FAILED');
    const schema = await bq.discover.importSchema(conn(), ctx);
    expect(schema).toMatchObject({ schema_type: 'relational', type: 'bigquery' });
    expect((schema as any).tables.find((t: any) => t.name === 'people')).toEqual({
      schema: 'shop',
      name: 'people',
      columns: [
        { name: 'id', type: 'INTEGER' },
        { name: 'name', type: 'STRING' },
        { name: 'score', type: 'FLOAT' },
      ],
    });
  });

  it('maps 403, quota and 429 answers', async () => {
    fake.failNext(1, 'rateLimitExceeded');
    expect((await failure(bq.test(conn(), ctx))).message).toContain('rate limit');
    fake.failNext(1, 'quotaExceeded');
    expect((await failure(bq.test(conn(), ctx))).code).toBe('REMOTE_ERROR');
    fake.oauth.rejectTokens(true);
    expect((await failure(bq.test(conn(), ctx))).code).toBe('AUTHENTICATION_FAILED');
    fake.oauth.rejectTokens(false);
    const denied = testServiceAccount(fake.tokenUri, 'denied@test-project.iam.gserviceaccount.com');
    fake.oauth.trust(denied.email, denied.publicKey);
    fake.deny(denied.email);
    const err = await failure(bq.test({ config, credentials: { service_account_json: denied.json } }, ctx));
    expect(err.code).toBe('PERMISSION_DENIED');
  });
});
