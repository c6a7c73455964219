import { randomBytes } from 'node:crypto';
import type { Payload } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MongoTarget, mongoDataSource, startMongoTarget } from '../../../../test/peers/mongo-target';
import { batches, collect, stepContext } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import type { MongoConnection } from './connect';
import { mongodbConfigSchema, mongodbConnector, mongodbCredentialsSchema } from './index';

// Pipeline read and write through the connector, against the wire peer (or MONGO_URL).

const DB = `sluice_pl_${randomBytes(4).toString('hex')}`;
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
let target: MongoTarget;

function connection(): MongoConnection {
  const ds = mongoDataSource(target, DB);
  return {
    config: mongodbConfigSchema.parse(ds.config),
    credentials: mongodbCredentialsSchema.parse(ds.credentials),
  };
}

const source = (operation: Record<string, unknown>, input: Record<string, unknown> = {}) =>
  stepContext(
    { kind: 'source', data_source_ref: 'db', operation: { operation_type: 'mongodb', ...operation } },
    { scope: { runtime: { input } } },
  );
const sink = (operation: Record<string, unknown>) =>
  stepContext({
    kind: 'sink',
    data_source_ref: 'db',
    operation: { operation_type: 'mongodb', ...operation },
  });

async function failure(p: Promise<unknown>, code: string): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(ConnectorError);
  expect(err.code, err.message).toBe(code);
  return err as ConnectorError;
}

const docs = (name: string) =>
  target.admin
    .db(DB)
    .collection(name)
    .find({}, { projection: { _id: 0 } })
    .sort({ id: 1 })
    .toArray();

beforeAll(async () => {
  target = await startMongoTarget();
  await target.admin
    .db(DB)
    .collection('events')
    .insertMany(
      Array.from({ length: 120 }, (_, i) => ({
        id: i + 1,
        kind: i % 2 === 0 ? 'even' : 'odd',
        at: new Date(Date.UTC(2026, 0, 1, 0, i)),
      })),
    );
}, 60_000);

afterAll(async () => {
  await target?.admin
    .db(DB)
    .dropDatabase()
    .catch(() => {});
  await target?.close();
});

describe('mongodb pipeline source', () => {
  it('streams a find in batches of batch_size as JSON records', async () => {
    const out = await mongodbConnector.source.read(
      connection(),
      source({ collection: 'events', projection: { _id: 0 }, sort: { id: 1 }, batch_size: 50 }),
      ctx,
    );
    expect(out.payload.kind).toBe('json');
    const { items, sizes } = await collect(out.payload);
    expect(sizes).toEqual([50, 50, 20]);
    expect(items[0]).toEqual({ id: 1, kind: 'even', at: '2026-01-01T00:00:00.000Z' });
    expect(items.map((d: any) => d.id)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    await expect(out.nextCursor()).resolves.toBeNull();
  });

  it('binds run inputs as values in an aggregate', async () => {
    const out = await mongodbConnector.source.read(
      connection(),
      source(
        {
          collection: 'events',
          operation: 'aggregate',
          pipeline: [
            { $match: { kind: '{{runtime.input.kind}}', id: { $lte: '{{runtime.input.upto}}' } } },
            { $group: { _id: '$kind', n: { $sum: 1 } } },
          ],
        },
        { kind: 'odd', upto: 10 },
      ),
      ctx,
    );
    expect((await collect(out.payload)).items).toEqual([{ _id: 'odd', n: 5 }]);
  });

  it('stops reading and closes its client when the run is canceled', async () => {
    const step = source({ collection: 'events', sort: { id: 1 }, batch_size: 10 });
    const out = await mongodbConnector.source.read(connection(), step, ctx);
    if (out.payload.kind !== 'json') throw new Error('json expected');
    const it = out.payload.batches[Symbol.asyncIterator]();
    expect((await it.next()).value).toHaveLength(10);
    step.controller.abort();
    const err = await (async () => {
      for (;;) if ((await it.next()).done) return null;
    })().catch((e) => e);
    expect(err).toBeInstanceOf(ConnectorError);
    expect(err.code).toBe('TIMEOUT');
    await expect(out.nextCursor()).rejects.toBeTruthy();
  });

  it('refuses writing stages and a write block in a source', async () => {
    await failure(
      mongodbConnector.source.read(
        connection(),
        source({ collection: 'events', operation: 'aggregate', pipeline: [{ $out: 'copy' }] }),
        ctx,
      ),
      'INVALID_STATEMENT',
    );
    await failure(
      mongodbConnector.source.read(
        connection(),
        source({ collection: 'events', filter: { $where: '1' } }),
        ctx,
      ),
      'INVALID_STATEMENT',
    );
  });
});

const rows = (columns: [string, string][], ...data: unknown[][][]): Payload => ({
  kind: 'rows',
  columns: columns.map(([name, type]) => ({ name, type })),
  batches: batches<unknown[]>(...data),
});

describe('mongodb pipeline sink', () => {
  const columns: [string, string][] = [
    ['id', 'bigint'],
    ['name', 'text'],
    ['amount', 'numeric'],
    ['qty', 'integer'],
    ['at', 'timestamp with time zone'],
    ['meta', 'jsonb'],
  ];

  it('inserts rows with BSON types from their column types, in batches', async () => {
    const step = sink({ collection: 'typed', write: { mode: 'insert' }, batch_size: 2 });
    const result = await mongodbConnector.sink.write(
      connection(),
      rows(
        columns,
        [
          ['1', 'ann', '12.50', 3, '2026-01-05 00:00:00+00', { a: 1 }],
          ['9007199254740993', 'bob', null, 4, '2026-01-05 10:30:00.5+02', null],
        ],
        [['3', 'cy', '0.1', null, null, null]],
      ),
      step,
      ctx,
    );
    expect(result.rows).toBe(3);
    expect(result.bytes).toBeGreaterThan(0);
    expect(step.counters.rows_out).toBe(3);
    const stored = await target.admin
      .db(DB)
      .collection('typed')
      .find({}, { projection: { _id: 0 } })
      .sort({ name: 1 })
      .toArray();
    expect(stored[0].id._bsontype ?? typeof stored[0].id).toMatch(/Long|number/);
    expect(String(stored[1].id)).toBe('9007199254740993');
    expect(stored[0].amount.toString()).toBe('12.50');
    expect(stored[0].at.toISOString()).toBe('2026-01-05T00:00:00.000Z');
    expect(stored[1].at.toISOString()).toBe('2026-01-05T08:30:00.500Z');
    expect(stored[0].meta).toEqual({ a: 1 });
    expect(stored[2]).toMatchObject({ name: 'cy', qty: null });
  });

  it('upserts by key: a second run replaces, the last record of a key wins', async () => {
    const write = (data: unknown[][]) =>
      mongodbConnector.sink.write(
        connection(),
        { kind: 'json', batches: batches(data) },
        sink({ collection: 'people', write: { mode: 'upsert', key: ['id'] } }),
        ctx,
      );
    await write([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ] as any);
    await write([
      { id: 2, name: 'B' },
      { id: 3, name: 'c' },
      { id: 3, name: 'C' },
    ] as any);
    expect(await docs('people')).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'B' },
      { id: 3, name: 'C' },
    ]);
  });

  it('keeps key values as values, even ones shaped like operators', async () => {
    await mongodbConnector.sink
      .write(
        connection(),
        { kind: 'json', batches: batches([{ id: { $gt: 0 }, name: 'odd key' }]) },
        sink({ collection: 'people', write: { mode: 'upsert', key: ['name'] } }),
        ctx,
      )
      .catch(() => {});
    // Whatever the server made of it, no existing document was replaced.
    expect((await docs('people')).filter((d) => d.name !== 'odd key')).toHaveLength(3);
  });

  it('stops writing when the run is canceled', async () => {
    const step = sink({ collection: 'canceled', write: { mode: 'insert' } });
    async function* upstream() {
      yield [{ n: 1 }, { n: 2 }];
      step.controller.abort();
      yield [{ n: 3 }];
    }
    await failure(
      mongodbConnector.sink.write(connection(), { kind: 'json', batches: upstream() }, step, ctx),
      'TIMEOUT',
    );
    expect((await docs('canceled')).map((d) => d.n).sort()).toEqual([1, 2]);
  });

  it('refuses read-only data sources, files, missing keys and $ field names', async () => {
    const ok = sink({ collection: 'x', write: { mode: 'insert' } });
    const json = (items: unknown[]): Payload => ({ kind: 'json', batches: batches(items) });
    await failure(
      mongodbConnector.sink.write(connection(), json([{ a: 1 }]), ok, { ...ctx, readOnly: true }),
      'PERMISSION_DENIED',
    );
    await failure(
      mongodbConnector.sink.write(
        connection(),
        { kind: 'file', mimeType: 'application/pdf', chunks: (async function* () {})() },
        ok,
        ctx,
      ),
      'INVALID_STATEMENT',
    );
    await failure(
      mongodbConnector.sink.write(
        connection(),
        json([{ a: 1 }]),
        sink({ collection: 'x', write: { mode: 'upsert' } }),
        ctx,
      ),
      'INVALID_STATEMENT',
    );
    await failure(
      mongodbConnector.sink.write(
        connection(),
        json([{ id: 1 }, { name: 'no id' }]),
        sink({ collection: 'x', write: { mode: 'upsert', key: ['id'] } }),
        ctx,
      ),
      'QUERY_FAILED',
    );
    await failure(
      mongodbConnector.sink.write(connection(), json([{ $set: { a: 1 } }]), ok, ctx),
      'INVALID_STATEMENT',
    );
    await failure(
      mongodbConnector.sink.write(connection(), json([{ a: 1 }]), sink({ collection: 'x' }), ctx),
      'INVALID_STATEMENT',
    );
  });

  it('reports a duplicate _id as QUERY_FAILED without the value', async () => {
    const err = await failure(
      mongodbConnector.sink.write(
        connection(),
        {
          kind: 'json',
          batches: batches([
            { _id: 'SecretDuplicateValue', a: 1 },
            { _id: 'SecretDuplicateValue', a: 2 },
          ]),
        },
        sink({ collection: 'dups', write: { mode: 'insert' } }),
        ctx,
      ),
      'QUERY_FAILED',
    );
    expect(err.message).toContain('E11000');
    expect(err.message).not.toContain('SecretDuplicateValue');
  });
});
