import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MongoTarget, mongoDataSource, startMongoTarget } from '../peers/mongo-target';
import { dumpStore, pgQuery } from '../support/runs';
import {
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  PE,
  pgDataSource,
  runToEnd,
  scratchRuntime,
  stepOf,
} from './support';

// Issue 5 acceptance through the API and the worker, on PostgreSQL as the platform store:
// 100,000 rows from PostgreSQL into a MongoDB collection and from that collection back into
// another PostgreSQL table, every row accounted for (count, sum of ids, sum of amounts, a
// checksum of the labels, on both sides); the connection test and schema import over the API;
// and a credential canary that no response, run record or stored row ever shows. MongoDB is the
// wire peer, or a real server (MONGO_URL).

const N = 100_000;
const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_mg_${id}`;
const PG_DB = `sluice_mg_pg_${id}`;
const MONGO_DB = `sluice_mg_${id}`;
const CANARY = `CanaryMongoPassword-${randomBytes(9).toString('hex')}`;

const label = (i: number) => `item-${i}${i % 1000 === 0 ? ' "quoted", \n' : ''}`;
const amount = (i: number) => ((i % 100_000) / 100).toFixed(2);
const md5 = (parts: string[]) => createHash('md5').update(parts.join(',')).digest('hex');

describe('MongoDB pipelines, 100,000 rows each way', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let target: MongoTarget;
  const bodies: string[] = [];
  const call = async (method: string, url: string, body?: unknown) => {
    const r = await s.call(method, url, body);
    bodies.push(r.body);
    return r;
  };

  beforeAll(async () => {
    target = await startMongoTarget();
    await pgQuery('postgres', `drop database if exists ${PG_DB} with (force)`);
    await pgQuery('postgres', `create database ${PG_DB}`);
    await pgQuery(
      PG_DB,
      `create table items (id bigint primary key, label text not null, amount numeric(12,2) not null, qty int, at timestamptz);
       create table items_copy (like items including all);
       insert into items
       select g, 'item-' || g || case when g % 1000 = 0 then ' "quoted", ' || E'\\n' else '' end,
              (g % 100000) / 100.0, g % 50, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second'
         from generate_series(1, ${N}) g`,
    );
    s = await scratchRuntime(STORE_DB, { worker: true });
    const ds = mongoDataSource(target, MONGO_DB);
    await createDataSource(call, { type: 'mongodb', name: 'mongo', slug: 'mongo', ...ds });
    await createDataSource(call, {
      type: 'mongodb',
      name: 'mongo-canary',
      slug: 'mongo-canary',
      config: { ...ds.config, username: target.username ?? 'nobody' },
      credentials: { password: CANARY },
    });
    await createDataSource(call, pgDataSource('warehouse', PG_DB));
    await createProjectAndEnvironment(call);
    await deployPipeline(call, {
      pipeline: 'mongo-to-pg',
      spec: {
        steps: [
          {
            slug: 'read',
            kind: 'source',
            data_source_ref: 'docs',
            operation: { operation_type: 'mongodb', collection: 'items_back', projection: { _id: 0 } },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'items_copy', mode: 'insert' } },
          },
        ],
        edges: [{ from: 'read', to: 'load' }],
      },
      bindings: { docs: 'mongo', warehouse: 'warehouse' },
    });
    await deployPipeline(call, {
      pipeline: 'pg-to-mongo',
      spec: {
        steps: [
          {
            slug: 'read',
            kind: 'source',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', sql: 'SELECT id, label, amount, qty, at FROM items' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'docs',
            operation: {
              operation_type: 'mongodb',
              collection: 'items_back',
              write: { mode: 'upsert', key: ['id'] },
            },
          },
        ],
        edges: [{ from: 'read', to: 'load' }],
      },
      bindings: { docs: 'mongo', warehouse: 'warehouse' },
    });
  }, 180_000);

  afterAll(async () => {
    await s?.close();
    await target?.admin
      .db(MONGO_DB)
      .dropDatabase()
      .catch(() => {});
    await target?.close();
    await pgQuery('postgres', `drop database if exists ${PG_DB} with (force)`);
  });

  const fingerprint = async (table: string) =>
    (
      await pgQuery(
        PG_DB,
        `select count(*)::text as n, sum(id)::text as ids, sum(amount)::text as amounts, sum(qty)::text as qty,
                md5(string_agg(label, ',' order by id)) as labels, md5(string_agg(at::text, ',' order by id)) as ats
           from ${table}`,
      )
    )[0];

  it('tests the connection over the API', async () => {
    const good = await ok(call('POST', `${ORG}/data-sources/mongo/test-connection`), 200);
    expect(good).toMatchObject({ ok: true, error: null });
    const bad = await ok(call('POST', `${ORG}/data-sources/mongo-canary/test-connection`), 200);
    expect(bad).toMatchObject({ ok: false, error: { code: 'AUTHENTICATION_FAILED' } });
  });

  it('moves every row from PostgreSQL into MongoDB with their types', async () => {
    const run = await runToEnd(call, 'pg-to-mongo', { run_slug: 'pg-to-mongo-1' }, 240_000);
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(run, 'read')).toMatchObject({ state: 'succeeded', rows_out: N });
    expect(stepOf(run, 'load')).toMatchObject({ state: 'succeeded', rows_in: N, rows_out: N });
    const all = await target.admin
      .db(MONGO_DB)
      .collection('items_back')
      .find({}, { projection: { _id: 0 }, sort: { id: 1 } })
      .toArray();
    expect(all).toHaveLength(N);
    expect(all.map((d) => Number(d.id))).toEqual(Array.from({ length: N }, (_, k) => k + 1));
    expect(md5(all.map((d) => d.label))).toBe(md5(Array.from({ length: N }, (_, k) => label(k + 1))));
    expect(all.every((d, k) => d.amount.toString() === amount(k + 1) && d.qty === (k + 1) % 50)).toBe(true);
    // bigint became a 64-bit integer, numeric a Decimal128, timestamptz a date.
    expect(all[0].id._bsontype ?? typeof all[0].id).toMatch(/Long|bigint|number/);
    expect(all[0].amount._bsontype).toBe('Decimal128');
    expect(all[0].at).toBeInstanceOf(Date);
    expect(all[0].at.toISOString()).toBe('2026-01-01T00:00:01.000Z');
  }, 300_000);

  it('imports the document schema over the API', async () => {
    await ok(call('POST', `${ORG}/data-sources/mongo/schema-import`), 202);
    let ds: any;
    for (let i = 0; i < 300; i++) {
      ds = await ok(call('GET', `${ORG}/data-sources/mongo`), 200);
      if (ds.schema_status !== 'importing') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ds.schema_status, JSON.stringify(ds)).toBe('ready');
    expect(ds.schema).toEqual({
      schema_type: 'document',
      type: 'mongodb',
      collections: [
        {
          name: 'items_back',
          fields: [
            { name: '_id', type: 'objectId' },
            { name: 'id', type: 'long' },
            { name: 'label', type: 'string' },
            { name: 'amount', type: 'decimal' },
            { name: 'qty', type: 'int' },
            { name: 'at', type: 'date' },
          ],
        },
      ],
    });
  }, 60_000);

  it('saves and executes a query with bound parameters over the API', async () => {
    await ok(
      call('POST', `${ORG}/queries`, {
        name: 'big orders',
        slug: 'big-orders',
        data_source_slug: 'mongo',
        statement: {
          type: 'mongodb',
          collection: 'items_back',
          filter: { qty: { $gte: '{{min_qty}}' }, id: { $lte: '{{max_id}}' } },
          projection: { _id: 0, id: 1, amount: 1, at: 1 },
          sort: { id: -1 },
        },
      }),
      201,
    );
    const execution = await ok(
      call('POST', `${ORG}/queries/big-orders:execute`, { parameters: { min_qty: 48, max_id: 200 } }),
      [200, 201],
    );
    expect(execution, JSON.stringify(execution)).toMatchObject({
      status: 'succeeded',
      result_type: 'mongodb',
      row_count: 8,
      truncated: false,
    });
    expect(execution.result.documents[0]).toEqual({
      id: '199',
      amount: '1.99',
      at: '2026-01-01T00:03:19.000Z',
    });
    const injected = await ok(
      call('POST', `${ORG}/queries/big-orders:execute`, { parameters: { min_qty: { $gt: -1 }, max_id: 1 } }),
      [200, 201],
    );
    expect(injected).toMatchObject({ status: 'failed', error: { code: 'INVALID_STATEMENT' } });
  });

  it('moves every document from MongoDB back into PostgreSQL', async () => {
    const run = await runToEnd(call, 'mongo-to-pg', { run_slug: 'mongo-to-pg-1' }, 240_000);
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(run, 'read')).toMatchObject({ state: 'succeeded', rows_out: N });
    expect(stepOf(run, 'load')).toMatchObject({ state: 'succeeded', rows_in: N, rows_out: N });
    const source = await fingerprint('items');
    expect(source.n).toBe(String(N));
    expect(source.ids).toBe(String((N * (N + 1)) / 2));
    expect(await fingerprint('items_copy')).toEqual(source);
  }, 300_000);

  it('never shows the credential: responses, run records, logs and the store', async () => {
    await deployPipeline(call, {
      pipeline: 'canary',
      spec: {
        steps: [
          {
            slug: 'read',
            kind: 'source',
            data_source_ref: 'docs',
            operation: { operation_type: 'mongodb', collection: 'items_back', limit: 5 },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'items_copy', mode: 'upsert', key: ['id'] } },
          },
        ],
        edges: [{ from: 'read', to: 'load' }],
      },
      bindings: { docs: 'mongo-canary', warehouse: 'warehouse' },
    });
    const run = await runToEnd(call, 'canary', { run_slug: 'canary-1' }, 60_000);
    expect(run.state).toBe('failed');
    expect(stepOf(run, 'read').error).toMatchObject({ code: 'AUTHENTICATION_FAILED' });
    await ok(call('GET', `${PE}/runs/canary-1/logs?limit=100`), 200);
    await ok(call('GET', `${ORG}/data-sources/mongo-canary`), 200);
    for (const body of bodies) expect(body).not.toContain(CANARY);
    const dump = await dumpStore((text) => s.rt.deps.store.executeSql(text, []));
    expect(dump).toContain('AUTHENTICATION_FAILED');
    expect(dump).not.toContain(CANARY);
    expect(s.logs()).not.toContain(CANARY);
  }, 120_000);
});
