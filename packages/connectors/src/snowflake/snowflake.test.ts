import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Payload } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SnowflakeApiPeer, startSnowflakeApi } from '../../../../test/peers/snowflake-api';
import { batches, collect, stepContext } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import type { SnowflakeConnection } from './connect';
import { snowflakeConfigSchema, snowflakeConnector, snowflakeCredentialsSchema } from './index';

// The Snowflake connector driven through snowflake-sdk against the REST fake in
// test/peers/snowflake-api.ts: password and key-pair sign-in, failures, binds, schema import,
// streamed reads across result chunks and async polling, and batched inserts.

const PASSWORD = `SfPw-${randomBytes(12).toString('hex')}`;
const PASSPHRASE = `SfPass-${randomBytes(8).toString('hex')}`;
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_KEY = keys.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const ENCRYPTED_KEY = keys.privateKey
  .export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: PASSPHRASE })
  .toString();
const OTHER_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ format: 'pem', type: 'pkcs8' })
  .toString();

const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
let peer: SnowflakeApiPeer;

const conn = (
  credentials: Record<string, unknown>,
  config: Record<string, unknown> = {},
): SnowflakeConnection => ({
  config: snowflakeConfigSchema.parse({
    account: 'testorg-testacct',
    username: 'loader',
    warehouse: 'LOAD_WH',
    database: 'ANALYTICS',
    schema: 'PUBLIC',
    access_url: peer.url,
    allow_private_hosts: true,
    ...config,
  }) as SnowflakeConnection['config'],
  credentials: snowflakeCredentialsSchema.parse(credentials) as SnowflakeConnection['credentials'],
});
const pw = (config: Record<string, unknown> = {}) => conn({ password: PASSWORD }, config);

async function failure(p: Promise<unknown>, code: string): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(ConnectorError);
  expect(err.code, err.message).toBe(code);
  for (const secret of [PASSWORD, PASSPHRASE, PRIVATE_KEY.slice(40, 100)])
    expect(err.message).not.toContain(secret);
  return err as ConnectorError;
}

beforeAll(async () => {
  peer = await startSnowflakeApi({
    users: [
      {
        name: 'loader',
        password: PASSWORD,
        publicKey: keys.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
        roles: ['LOADER', 'PUBLIC'],
      },
    ],
    tables: [
      {
        schema: 'PUBLIC',
        name: 'CUSTOMERS',
        columns: [
          { name: 'ID', type: 'NUMBER(38,0)' },
          { name: 'NAME', type: 'VARCHAR' },
          { name: 'ACTIVE', type: 'BOOLEAN' },
          { name: 'SCORE', type: 'FLOAT' },
        ],
        rows: [
          [1, 'ann', true, 1.5],
          [2, "o'brien; DROP TABLE customers", false, null],
          [3, 'cy', true, 3],
        ],
      },
      {
        schema: 'PUBLIC',
        name: 'EVENTS',
        columns: [
          { name: 'ID', type: 'NUMBER(38,0)' },
          { name: 'KIND', type: 'VARCHAR' },
        ],
        rows: Array.from({ length: 12_345 }, (_, i) => [i + 1, `k${i % 7}`]),
      },
    ],
  });
});

afterAll(async () => {
  await peer?.close();
});

describe('snowflake connector', () => {
  it('signs in with a password, a private key and an encrypted private key', async () => {
    await snowflakeConnector.test(pw(), ctx);
    await snowflakeConnector.test(conn({ private_key: PRIVATE_KEY }), ctx);
    await snowflakeConnector.test(
      conn({ private_key: ENCRYPTED_KEY, private_key_passphrase: PASSPHRASE }),
      ctx,
    );
    await snowflakeConnector.test(pw({ role: 'LOADER' }), ctx);
  });

  it('maps sign-in failures without leaking credentials', async () => {
    const bad = await failure(
      snowflakeConnector.test(conn({ password: 'wrong-password' }), ctx),
      'AUTHENTICATION_FAILED',
    );
    expect(bad.message).toContain('390100');
    await failure(snowflakeConnector.test(conn({ private_key: OTHER_KEY }), ctx), 'AUTHENTICATION_FAILED');
    await failure(
      snowflakeConnector.test(conn({ private_key: ENCRYPTED_KEY, private_key_passphrase: 'nope' }), ctx),
      'AUTHENTICATION_FAILED',
    );
    await failure(snowflakeConnector.test(pw({ role: 'ACCOUNTADMIN' }), ctx), 'PERMISSION_DENIED');
    peer.setFault('expired');
    const expired = await failure(snowflakeConnector.test(pw(), ctx), 'AUTHENTICATION_FAILED');
    expect(expired.message).toContain('expired');
    peer.setFault('rate_limit');
    const limited = await failure(snowflakeConnector.test(pw(), ctx), 'REMOTE_ERROR');
    expect(limited.message).toContain('429');
    peer.setFault(null);
    await failure(
      snowflakeConnector.test(pw(), { ...ctx, policy: egressPolicy('self_hosted', false) }),
      'PRIVATE_HOST_BLOCKED',
    );
    expect(() =>
      snowflakeConfigSchema.parse({ account: 'a', username: 'u', access_url: 'http://127.0.0.1:1' }),
    ).toThrow();
  });

  it('runs a query with bound values, never spliced into the text', async () => {
    const r = await snowflakeConnector.query.execute(
      pw(),
      { type: 'sql', sql: 'SELECT id, name FROM customers WHERE name = {{who}}' },
      { who: "o'brien; DROP TABLE customers" },
      ctx,
    );
    expect(r).toMatchObject({ result_type: 'sql', row_count: 1, truncated: false });
    expect(r.payload).toMatchObject({
      columns: [
        { name: 'ID', type: 'NUMBER' },
        { name: 'NAME', type: 'TEXT' },
      ],
      rows: [[2, "o'brien; DROP TABLE customers"]],
    });
    const sent = peer.requests
      .filter((q) => q.path === '/queries/v1/query-request')
      .map((q) => JSON.parse(q.body));
    const last = sent[sent.length - 1];
    expect(last.sqlText).toBe('SELECT id, name FROM customers WHERE name = ?');
    expect(last.bindings).toEqual({ '1': { type: 'TEXT', value: "o'brien; DROP TABLE customers" } });

    const limited = await snowflakeConnector.query.execute(
      pw(),
      { type: 'sql', sql: 'SELECT * FROM events' },
      {},
      {
        ...ctx,
        limits: { ...defaultLimits, maxRows: 10 },
      },
    );
    expect(limited).toMatchObject({ row_count: 10, truncated: true });
    await failure(
      snowflakeConnector.query.execute(pw(), { type: 'sql', sql: 'SELECT * FROM nope' }, {}, ctx),
      'QUERY_FAILED',
    );
    await failure(
      snowflakeConnector.query.execute(
        pw(),
        { type: 'sql', sql: 'DELETE FROM customers' },
        {},
        { ...ctx, readOnly: true },
      ),
      'PERMISSION_DENIED',
    );
  });

  it('gives up on a statement that never answers, and cancels it', async () => {
    peer.setFault('hang');
    try {
      const started = Date.now();
      await failure(
        snowflakeConnector.query.execute(
          pw({ timeout_seconds: 1 }),
          { type: 'sql', sql: 'SELECT 1' },
          {},
          ctx,
        ),
        'TIMEOUT',
      );
      // It did time out rather than hang (generous bound: many times the configured timeout).
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      peer.setFault(null);
    }
  });

  it('checks the result chunk URLs Snowflake names against the egress policy', async () => {
    // Only the fake's address is allowed; a chunk URL naming another loopback address is not.
    const narrow: ConnectorContext = {
      ...ctx,
      policy: { allowPrivate: false, allowCidrs: ['127.0.0.1/32'] },
    };
    const src = stepContext({
      kind: 'source',
      data_source_ref: 'sf',
      operation: { operation_type: 'sql', sql: 'SELECT id FROM events' },
    });
    peer.setChunkOrigin(peer.url.replace('127.0.0.1', '127.0.0.2'));
    try {
      const out = await snowflakeConnector.source.read(pw(), src, narrow);
      await failure(collect(out.payload), 'PRIVATE_HOST_BLOCKED');
    } finally {
      peer.setChunkOrigin(null);
    }
    const out = await snowflakeConnector.source.read(pw(), src, narrow);
    expect((await collect(out.payload)).items.length).toBe(12_345);
  });

  it('imports tables and columns from INFORMATION_SCHEMA', async () => {
    const schema = await snowflakeConnector.discover.importSchema(pw(), ctx);
    expect(schema).toMatchObject({ schema_type: 'relational', type: 'snowflake' });
    expect((schema as any).tables.find((t: any) => t.name === 'CUSTOMERS')).toEqual({
      schema: 'PUBLIC',
      name: 'CUSTOMERS',
      columns: [
        { name: 'ID', type: 'NUMBER' },
        { name: 'NAME', type: 'TEXT' },
        { name: 'ACTIVE', type: 'BOOLEAN' },
        { name: 'SCORE', type: 'FLOAT' },
      ],
    });
  });

  it('streams a source across result chunks and writes batched inserts and MERGE upserts in one transaction', async () => {
    const src = stepContext({
      kind: 'source',
      data_source_ref: 'sf',
      operation: { operation_type: 'sql', sql: 'SELECT id, kind FROM events ORDER BY id' },
    });
    const out = await snowflakeConnector.source.read(pw(), src, ctx);
    expect(out.payload.kind).toBe('rows');
    expect((out.payload as any).columns).toEqual([
      { name: 'ID', type: 'bigint' },
      { name: 'KIND', type: 'text' },
    ]);
    const { items } = await collect(out.payload);
    expect(items.length).toBe(12_345);
    expect(items[0]).toEqual([1, 'k0']);
    expect(items[12_344]).toEqual([12_345, `k${12_344 % 7}`]);
    expect(await out.nextCursor()).toBeNull();
    // cursor_column names the result column without regard to Snowflake's upper case.
    const tracked = await snowflakeConnector.source.read(
      pw(),
      stepContext({
        kind: 'source',
        data_source_ref: 'sf',
        operation: {
          operation_type: 'sql',
          sql: 'SELECT id, kind FROM events ORDER BY id',
          cursor_column: 'id',
        },
      }),
      ctx,
    );
    await collect(tracked.payload);
    expect(await tracked.nextCursor()).toBe('12345');

    const payload: Payload = {
      kind: 'rows',
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'label', type: 'text' },
        { name: 'Mixed Case', type: 'boolean' },
      ],
      batches: batches<unknown[]>(
        Array.from({ length: 6000 }, (_, i) => [i, `l${i}`, i % 2 === 0]),
        [[6000, null, null]],
      ),
    };
    const sink = stepContext({
      kind: 'sink',
      data_source_ref: 'sf',
      operation: { operation_type: 'sql', write: { table: 'loaded', mode: 'insert', create_table: true } },
    });
    expect(await snowflakeConnector.sink.write(pw(), payload, sink, ctx)).toMatchObject({ rows: 6001 });
    const t = peer.tables.get('LOADED')!;
    expect(t.columns.map((c) => c.name)).toEqual(['ID', 'LABEL', 'Mixed Case']);
    expect(t.rows.length).toBe(6001);
    expect(t.rows[1]).toEqual([1, 'l1', false]);
    const inserts = peer.requests.filter(
      (q) => q.path === '/queries/v1/query-request' && q.body.includes('INSERT INTO LOADED'),
    );
    expect(inserts.length).toBe(2);
    expect(JSON.parse(inserts[0].body).sqlText).toBe(
      'INSERT INTO LOADED ("ID", "LABEL", "Mixed Case") VALUES (?, ?, ?)',
    );

    // A failing batch rolls the whole run back.
    const bad: Payload = {
      kind: 'rows',
      columns: [{ name: 'id', type: 'text' }],
      batches: batches<unknown[]>([[1], [2]], [['not a number']]),
    };
    const replace = stepContext({
      kind: 'sink',
      data_source_ref: 'sf',
      operation: { operation_type: 'sql', write: { table: 'loaded', mode: 'replace' } },
    });
    const err = await failure(snowflakeConnector.sink.write(pw(), bad, replace, ctx), 'QUERY_FAILED');
    expect(err.message).not.toContain('not a number');
    expect(peer.tables.get('LOADED')!.rows.length).toBe(6001);
    const upsert = stepContext({
      kind: 'sink',
      data_source_ref: 'sf',
      operation: { operation_type: 'sql', write: { table: 'loaded', mode: 'upsert', key: ['id'] } },
    });
    const changes: Payload = {
      kind: 'rows',
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'label', type: 'text' },
      ],
      batches: batches<unknown[]>(
        [
          [1, 'one'],
          [7000, 'new'],
        ],
        [[1, 'uno']],
      ),
    };
    expect(await snowflakeConnector.sink.write(pw(), changes, upsert, ctx)).toMatchObject({ rows: 3 });
    const loaded = peer.tables.get('LOADED')!.rows;
    expect(loaded.length).toBe(6002);
    expect(loaded.filter((r) => r[0] === 1)).toEqual([[1, 'uno', false]]);
    expect(loaded.at(-1)).toEqual([7000, 'new', null]);
    const merge = peer.requests.filter((q) => q.body.includes('MERGE INTO')).at(-1)!;
    expect(JSON.parse(merge.body).sqlText).toBe(
      'MERGE INTO LOADED T USING (SELECT $1 AS "ID", $2 AS "LABEL" FROM VALUES (?, ?), (?, ?)) S ON T."ID" = S."ID" WHEN MATCHED THEN UPDATE SET T."LABEL" = S."LABEL" WHEN NOT MATCHED THEN INSERT ("ID", "LABEL") VALUES (S."ID", S."LABEL")',
    );
  });
});
