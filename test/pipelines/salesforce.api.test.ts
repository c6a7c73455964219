import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SalesforceApiPeer, startSalesforceApi } from '../peers/salesforce-api';
import { startTestApp, type TestApp } from '../support/app';
import { createSinkDatabase, dumpStore, pgQuery, waitUntil } from '../support/runs';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  PE,
  pgDataSource,
  runToEnd,
  stepOf,
} from './support';

// Issue 6 acceptance for Salesforce over the API, against the REST fake driven by jsforce:
// connection tests (success, bad client secret, expired token, missing permission, request
// limit), object schema import, a saved SOQL query with a parameter, 10,000 records Salesforce →
// PostgreSQL (read-only source) and PostgreSQL → Salesforce (upsert through a writable source),
// a read-only source refused as a sink, and the client secret kept out of every answer and record.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_sfdc_pg_${id}`;
const SECRET = `SfdcCanarySecret${randomBytes(12).toString('hex')}`;
const ROWS = 10_000;

describe('salesforce data sources and pipelines', () => {
  let t: TestApp;
  let peer: SalesforceApiPeer;
  let token: string;
  let pgDb: { drop(): Promise<unknown> };
  const bodies: string[] = [];
  const call: Call = async (method, url, body) => {
    const res = await t.call(method, url, { token, body });
    bodies.push(res.body);
    return res;
  };
  const salesforce = (slug: string, secret: string, extra: Record<string, unknown> = {}) => ({
    type: 'salesforce',
    name: slug,
    slug,
    config: { instance_url: peer.url, api_version: '62.0', allow_private_hosts: true },
    credentials: { client_id: 'sluice-app', client_secret: secret },
    ...extra,
  });
  const testConnection = async (slug: string) =>
    ok(call('POST', `${ORG}/data-sources/${slug}/test-connection`), 200);

  beforeAll(async () => {
    peer = await startSalesforceApi({
      clients: [{ id: 'sluice-app', secret: SECRET }],
      objects: [
        {
          name: 'Account',
          fields: [
            { name: 'Id', type: 'id' },
            { name: 'Name', type: 'string' },
            { name: 'Industry', type: 'picklist' },
            { name: 'AnnualRevenue', type: 'currency' },
          ],
          records: Array.from({ length: ROWS }, (_, i) => ({
            Id: `001${String(i + 1).padStart(15, '0')}`,
            Name: `Account ${i + 1}`,
            Industry: ['Energy', 'Retail', 'Banking'][i % 3],
            AnnualRevenue: (i + 1) * 100,
          })),
        },
        {
          name: 'Contact',
          fields: [
            { name: 'Id', type: 'id' },
            { name: 'LastName', type: 'string' },
            { name: 'Email', type: 'email' },
            { name: 'Ext_Id__c', type: 'string', externalId: true },
          ],
          records: [],
        },
      ],
    });
    pgDb = await createSinkDatabase(PG_DB);
    await pgQuery(
      PG_DB,
      `create table accounts (id text primary key, name text, industry text, revenue numeric);
       create table people (ext_id text primary key, last_name text, email text);
       insert into people select 'p-' || g, 'Last ' || g, 'p' || g || '@example.com' from generate_series(1, ${ROWS}) g`,
    );
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, salesforce('crm', SECRET));
    await createDataSource(call, salesforce('crm-rw', SECRET, { read_only: false }));
    await createDataSource(call, salesforce('crm-bad', 'not-the-secret'));
    await createDataSource(call, pgDataSource('pg', PG_DB));
    await createProjectAndEnvironment(call);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await peer?.close();
    await pgDb?.drop();
  });

  it('is read-only by default and tests connections: success, bad secret, expired token, missing permission, request limit', async () => {
    expect((await ok(call('GET', `${ORG}/data-sources/crm`), 200)).read_only).toBe(true);
    expect((await ok(call('GET', `${ORG}/data-sources/crm-rw`), 200)).read_only).toBe(false);
    expect(await testConnection('crm')).toMatchObject({ ok: true, error: null });
    expect(await testConnection('crm-bad')).toMatchObject({
      ok: false,
      error: { code: 'AUTHENTICATION_FAILED' },
    });
    try {
      peer.setFault('expire_tokens');
      const expired = await testConnection('crm');
      expect(expired).toMatchObject({ ok: false, error: { code: 'AUTHENTICATION_FAILED' } });
      expect(expired.error.message).toContain('INVALID_SESSION_ID');
      peer.setFault('insufficient_access');
      expect(await testConnection('crm')).toMatchObject({ ok: false, error: { code: 'PERMISSION_DENIED' } });
      peer.setFault('rate_limit');
      const limited = await testConnection('crm');
      expect(limited).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
      expect(limited.error.message).toContain('REQUEST_LIMIT_EXCEEDED');
    } finally {
      peer.setFault(null);
    }
    expect(await testConnection('crm')).toMatchObject({ ok: true, error: null });
  });

  it('imports the object schema and runs a saved SOQL query with a parameter', async () => {
    await ok(call('POST', `${ORG}/data-sources/crm/schema-import`), 202);
    const ds = await waitUntil(
      async () => (await call('GET', `${ORG}/data-sources/crm`)).json(),
      (d) => d.schema_status !== 'importing' && d.schema_status !== 'not_imported',
      20_000,
    );
    expect(ds.schema_status).toBe('ready');
    expect(ds.schema).toMatchObject({ schema_type: 'document', type: 'salesforce' });
    expect(ds.schema.collections.map((c: any) => c.name)).toEqual(['Account', 'Contact']);
    await ok(
      call('POST', `${ORG}/queries`, {
        name: 'account-by-name',
        slug: 'account-by-name',
        data_source_slug: 'crm',
        statement: { type: 'soql', soql: 'SELECT Id, Name, Industry FROM Account WHERE Name = {{name}}' },
      }),
      201,
    );
    const result = await ok(
      call('POST', `${ORG}/queries/account-by-name:execute`, { parameters: { name: 'Account 42' } }),
      200,
    );
    expect(result).toMatchObject({ result_type: 'object_rows', row_count: 1, truncated: false, error: null });
    expect(result.result).toEqual({
      records: [{ Id: '001000000000000042', Name: 'Account 42', Industry: 'Banking' }],
      total_size: 1,
    });
  });

  it(`moves ${ROWS} records Salesforce → PostgreSQL and upserts ${ROWS} PostgreSQL rows into Salesforce`, async () => {
    await deployPipeline(call, {
      pipeline: 'crm-to-pg',
      spec: {
        steps: [
          {
            slug: 'accounts',
            kind: 'source',
            data_source_ref: 'crm',
            operation: {
              operation_type: 'object_rows',
              soql: 'SELECT Id, Name, Industry, AnnualRevenue FROM Account',
            },
          },
          {
            slug: 'shape',
            kind: 'transform',
            operation: {
              operation_type: 'sql',
              sql: 'SELECT Id AS id, Name AS name, Industry AS industry, AnnualRevenue AS revenue FROM accounts',
            },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'db',
            operation: { operation_type: 'sql', write: { table: 'accounts', mode: 'upsert', key: ['id'] } },
          },
        ],
        edges: [
          { from: 'accounts', to: 'shape' },
          { from: 'shape', to: 'load' },
        ],
      },
      bindings: { crm: 'crm', db: 'pg' },
    });
    const run = await runToEnd(call, 'crm-to-pg', {}, 120_000);
    expect(run, JSON.stringify(run.error)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(run, 'accounts').rows_out).toBe(ROWS);
    const [agg] = await pgQuery(
      PG_DB,
      "select count(*)::int as n, sum(revenue)::text as s, count(*) filter (where industry = 'Retail')::int as retail from accounts",
    );
    expect(agg).toEqual({ n: ROWS, s: String((100 * ROWS * (ROWS + 1)) / 2), retail: 3333 });

    const upsertSpec = {
      steps: [
        {
          slug: 'people',
          kind: 'source',
          data_source_ref: 'db',
          operation: {
            operation_type: 'sql',
            sql: 'SELECT ext_id AS "Ext_Id__c", last_name AS "LastName", email AS "Email" FROM people ORDER BY ext_id',
          },
        },
        {
          slug: 'upsert',
          kind: 'sink',
          data_source_ref: 'crm',
          operation: { operation_type: 'object_rows', object: 'Contact', external_id_field: 'Ext_Id__c' },
        },
      ],
      edges: [{ from: 'people', to: 'upsert' }],
    };
    // The read-only source cannot be the sink.
    await ok(call('POST', `${ORG}/projects/shop/pipelines`, { name: 'pg-to-crm', slug: 'pg-to-crm' }), 201);
    const version = await ok(
      call('POST', `${ORG}/projects/shop/pipelines/pg-to-crm/versions`, { spec: upsertSpec }),
      [200, 201],
    );
    await ok(
      call('PUT', `${PE}/pipelines/pg-to-crm/data-source-bindings/crm`, { data_source_slug: 'crm' }),
      [200, 201],
    );
    await ok(
      call('PUT', `${PE}/pipelines/pg-to-crm/data-source-bindings/db`, { data_source_slug: 'pg' }),
      [200, 201],
    );
    const refused = await ok(
      call('POST', `${PE}/pipeline-validation`, { pipeline_slug: 'pg-to-crm', spec_hash: version.spec_hash }),
      [200, 201],
    );
    expect(refused.valid).toBe(false);
    expect(refused.findings.map((f: any) => f.code)).toContain('SINK_READ_ONLY');

    await deployPipeline(call, {
      pipeline: 'pg-to-crm',
      spec: upsertSpec,
      bindings: { crm: 'crm-rw', db: 'pg' },
      create: false,
    });
    const back = await runToEnd(call, 'pg-to-crm', {}, 120_000);
    expect(back, JSON.stringify(back.error)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(back, 'upsert').rows_in).toBe(ROWS);
    const contacts = peer.objects.get('contact')!.records;
    expect(contacts.length).toBe(ROWS);
    expect(contacts.find((c) => c.Ext_Id__c === 'p-77')).toMatchObject({
      LastName: 'Last 77',
      Email: 'p77@example.com',
    });
  });

  it('keeps the client secret out of answers, errors, logs and the store', async () => {
    const texts = {
      responses: bodies.join('\n'),
      logs: t.logs(),
      store: await dumpStore((q) => t.rt.deps.store.executeSql(q)),
    };
    for (const [where, text] of Object.entries(texts)) {
      expect(text.includes(SECRET), `client secret in ${where}`).toBe(false);
    }
  });
});
