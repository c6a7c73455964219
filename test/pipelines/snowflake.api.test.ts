import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SnowflakeApiPeer, startSnowflakeApi } from '../peers/snowflake-api';
import { startTestApp, type TestApp } from '../support/app';
import { createSinkDatabase, dumpStore, pgQuery, waitUntil } from '../support/runs';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  pgDataSource,
  runToEnd,
  stepOf,
} from './support';

// Issue 6 acceptance for Snowflake over the API, against the REST fake driven by snowflake-sdk:
// connection tests (success, wrong password, expired token, role not granted, rate limit),
// schema import, a saved query with a bound parameter, 10,000 rows Snowflake → PostgreSQL and
// PostgreSQL → Snowflake, and the password and private key kept out of every answer and record.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_sf_pg_${id}`;
const PASSWORD = `SfCanaryPw${randomBytes(12).toString('hex')}`;
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_KEY = keys.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
/** A recognisable line of the key's body. */
const KEY_LINE = PRIVATE_KEY.split('\n')[3];
const ROWS = 10_000;

describe('snowflake data sources and pipelines', () => {
  let t: TestApp;
  let peer: SnowflakeApiPeer;
  let token: string;
  let pgDb: { drop(): Promise<unknown> };
  const bodies: string[] = [];
  const call: Call = async (method, url, body) => {
    const res = await t.call(method, url, { token, body });
    bodies.push(res.body);
    return res;
  };

  const snowflake = (
    slug: string,
    credentials: Record<string, unknown>,
    config: Record<string, unknown> = {},
  ) => ({
    type: 'snowflake',
    name: slug,
    slug,
    config: {
      account: 'testorg-testacct',
      username: 'loader',
      warehouse: 'LOAD_WH',
      database: 'ANALYTICS',
      schema: 'PUBLIC',
      access_url: peer.url,
      allow_private_hosts: true,
      ...config,
    },
    credentials,
  });
  const testConnection = async (slug: string) =>
    ok(call('POST', `${ORG}/data-sources/${slug}/test-connection`), 200);

  beforeAll(async () => {
    peer = await startSnowflakeApi({
      users: [
        {
          name: 'loader',
          password: PASSWORD,
          publicKey: keys.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
          roles: ['LOADER'],
        },
      ],
      tables: [
        {
          schema: 'PUBLIC',
          name: 'ORDERS',
          columns: [
            { name: 'ID', type: 'NUMBER(38,0)' },
            { name: 'REGION', type: 'VARCHAR' },
            { name: 'AMOUNT', type: 'FLOAT' },
          ],
          rows: Array.from({ length: ROWS }, (_, i) => [i + 1, `r${i % 5}`, (i % 100) / 4]),
        },
      ],
    });
    pgDb = await createSinkDatabase(PG_DB);
    await pgQuery(
      PG_DB,
      `create table sf_orders (id bigint primary key, region text, amount double precision);
       create table people (id int primary key, name text, active boolean);
       insert into people select g, 'person ' || g, g % 3 = 0 from generate_series(1, ${ROWS}) g`,
    );
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, snowflake('sf', { password: PASSWORD }));
    await createDataSource(call, snowflake('sf-key', { private_key: PRIVATE_KEY }));
    await createDataSource(call, snowflake('sf-bad', { password: 'not-the-password' }));
    await createDataSource(call, snowflake('sf-admin', { password: PASSWORD }, { role: 'ACCOUNTADMIN' }));
    await createDataSource(call, pgDataSource('pg', PG_DB));
    await createProjectAndEnvironment(call);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await peer?.close();
    await pgDb?.drop();
  });

  it('tests connections: password and key pair succeed; bad password, expired token, missing role and rate limit fail', async () => {
    expect(await testConnection('sf')).toMatchObject({ ok: true, error: null });
    expect(await testConnection('sf-key')).toMatchObject({ ok: true, error: null });
    expect(await testConnection('sf-bad')).toMatchObject({
      ok: false,
      error: { code: 'AUTHENTICATION_FAILED' },
    });
    expect(await testConnection('sf-admin')).toMatchObject({
      ok: false,
      error: { code: 'PERMISSION_DENIED' },
    });
    peer.setFault('expired');
    const expired = await testConnection('sf-key');
    expect(expired).toMatchObject({ ok: false, error: { code: 'AUTHENTICATION_FAILED' } });
    expect(expired.error.message).toContain('expired');
    peer.setFault('rate_limit');
    expect(await testConnection('sf')).toMatchObject({ ok: false, error: { code: 'REMOTE_ERROR' } });
    peer.setFault(null);
    const ds = await ok(call('GET', `${ORG}/data-sources/sf-bad`), 200);
    expect(ds.test_error).toContain('390100');
  });

  it('imports the schema and runs a saved query with a bound parameter', async () => {
    await ok(call('POST', `${ORG}/data-sources/sf/schema-import`), 202);
    const ds = await waitUntil(
      async () => (await call('GET', `${ORG}/data-sources/sf`)).json(),
      (d) => d.schema_status !== 'importing' && d.schema_status !== 'not_imported',
      20_000,
    );
    expect(ds.schema_status).toBe('ready');
    expect(ds.schema.tables).toContainEqual({
      schema: 'PUBLIC',
      name: 'ORDERS',
      columns: [
        { name: 'ID', type: 'NUMBER' },
        { name: 'REGION', type: 'TEXT' },
        { name: 'AMOUNT', type: 'FLOAT' },
      ],
    });
    await ok(
      call('POST', `${ORG}/queries`, {
        name: 'by-region',
        slug: 'by-region',
        data_source_slug: 'sf',
        statement: { type: 'sql', sql: 'SELECT id, region FROM orders WHERE id = {{id}}' },
      }),
      201,
    );
    const result = await ok(
      call('POST', `${ORG}/queries/by-region:execute`, { parameters: { id: 42 } }),
      200,
    );
    expect(result).toMatchObject({ result_type: 'sql', row_count: 1, truncated: false });
    expect(result.result).toEqual({
      columns: [
        { name: 'ID', type: 'NUMBER' },
        { name: 'REGION', type: 'TEXT' },
      ],
      rows: [[42, 'r1']],
      command: 'SELECT',
      affected_rows: null,
    });
  });

  it(`moves ${ROWS} rows Snowflake → PostgreSQL and PostgreSQL → Snowflake`, async () => {
    await deployPipeline(call, {
      pipeline: 'sf-to-pg',
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'wh',
            operation: { operation_type: 'sql', sql: 'SELECT id, region, amount FROM orders' },
          },
          // Snowflake answers upper-case names (ID, REGION, AMOUNT); the transform names them.
          {
            slug: 'shape',
            kind: 'transform',
            operation: {
              operation_type: 'sql',
              sql: 'SELECT id AS id, region AS region, amount AS amount FROM orders',
            },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'db',
            operation: { operation_type: 'sql', write: { table: 'sf_orders', mode: 'upsert', key: ['id'] } },
          },
        ],
        edges: [
          { from: 'orders', to: 'shape' },
          { from: 'shape', to: 'load' },
        ],
      },
      bindings: { wh: 'sf', db: 'pg' },
    });
    const run = await runToEnd(call, 'sf-to-pg', {}, 120_000);
    expect(run, JSON.stringify(run.error)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(run, 'orders').rows_out).toBe(ROWS);
    const [agg] = await pgQuery(
      PG_DB,
      'select count(*)::int as n, sum(id)::bigint::text as s, max(amount) as m from sf_orders',
    );
    expect(agg).toEqual({ n: ROWS, s: String((ROWS * (ROWS + 1)) / 2), m: 24.75 });

    await deployPipeline(call, {
      pipeline: 'pg-to-sf',
      spec: {
        steps: [
          {
            slug: 'people',
            kind: 'source',
            data_source_ref: 'db',
            operation: { operation_type: 'sql', sql: 'SELECT id, name, active FROM people ORDER BY id' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'wh',
            operation: {
              operation_type: 'sql',
              write: { table: 'people', mode: 'replace', create_table: true },
            },
          },
        ],
        edges: [{ from: 'people', to: 'load' }],
      },
      bindings: { wh: 'sf-key', db: 'pg' },
    });
    const back = await runToEnd(call, 'pg-to-sf', {}, 120_000);
    expect(back, JSON.stringify(back.error)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(back, 'load').rows_in).toBe(ROWS);
    const people = peer.tables.get('PEOPLE')!;
    expect(people.columns.map((c) => c.name)).toEqual(['ID', 'NAME', 'ACTIVE']);
    expect(people.rows.length).toBe(ROWS);
    expect(people.rows[2]).toEqual([3, 'person 3', true]);
  });

  it('keeps the password and the private key out of answers, errors, logs and the store', async () => {
    const texts = {
      responses: bodies.join('\n'),
      logs: t.logs(),
      store: await dumpStore((q) => t.rt.deps.store.executeSql(q)),
    };
    for (const [where, text] of Object.entries(texts)) {
      expect(text.includes(PASSWORD), `password in ${where}`).toBe(false);
      expect(text.includes(KEY_LINE), `private key in ${where}`).toBe(false);
    }
  });
});
