import { randomBytes } from 'node:crypto';
import { Binary, Decimal128, Long, ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAcceptRecorder } from '../../../../test/peers/accept-recorder';
import { type MongoTarget, mongoDataSource, startMongoTarget } from '../../../../test/peers/mongo-target';
import { startMongoWire } from '../../../../test/peers/mongo-wire';
import { type SilentTcpServer, startSilentTcpServer } from '../../../../test/peers/silent-tcp';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits, type QueryResult } from '../types';
import { mongodbStatementSchema } from './config';
import type { MongoConnection } from './connect';
import { mongodbConfigSchema, mongodbConnector, mongodbCredentialsSchema } from './index';
import type { MongoPayload } from './operations';

// Connection test, schema import and saved-query execution against the wire peer (or a real
// server when MONGO_URL is set), driven through the official driver.

const DB = `sluice_ct_${randomBytes(4).toString('hex')}`;
const open: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
const closed: ConnectorContext = { policy: egressPolicy('self_hosted', false), limits: defaultLimits };
const OID = new ObjectId('65a1b2c3d4e5f60718293a4b');

let target: MongoTarget;
let silent: SilentTcpServer;

function connection(config: Record<string, unknown> = {}, password?: string): MongoConnection {
  const ds = mongoDataSource(target, DB, password ?? target.password);
  return {
    config: mongodbConfigSchema.parse({ ...ds.config, ...config }),
    credentials: mongodbCredentialsSchema.parse(ds.credentials),
  };
}

async function failure(p: Promise<unknown>, code: string): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(ConnectorError);
  expect(err.code, err.message).toBe(code);
  return err as ConnectorError;
}

const exec = async (
  statement: Record<string, unknown>,
  parameters: Record<string, unknown> = {},
  ctx = open,
) =>
  (await mongodbConnector.query.execute(
    connection(),
    mongodbStatementSchema.parse({ type: 'mongodb', ...statement }),
    parameters,
    ctx,
  )) as QueryResult & { payload: MongoPayload };

beforeAll(async () => {
  target = await startMongoTarget();
  silent = await startSilentTcpServer();
  const db = target.admin.db(DB);
  await db.collection('orders').insertMany([
    {
      _id: OID,
      n: 1,
      region: 'eu',
      qty: 3,
      price: 2.5,
      big: Long.fromString('9007199254740993'),
      amount: Decimal128.fromString('12.10'),
      at: new Date('2026-01-05T10:00:00Z'),
      tags: ['a', 'b'],
      address: { city: 'Lyon', zip: '69001' },
      code: 'A1',
      blob: new Binary(Buffer.from('hi')),
      nothing: null,
    },
    { n: 2, region: 'us', qty: 7, price: 3, code: 42, nothing: null },
    { n: 3, region: 'eu', qty: 10, price: 1, code: 'C3', nothing: null },
    { n: 4, region: 'eu', qty: 1, price: 4.25, nothing: null },
  ]);
  await db.collection('many').insertMany(Array.from({ length: 30 }, (_, i) => ({ i })));
}, 60_000);

afterAll(async () => {
  await target?.admin
    .db(DB)
    .dropDatabase()
    .catch(() => {});
  await target?.close();
  await silent?.close();
});

describe('mongodb connection test', () => {
  it('succeeds with the right credentials', async () => {
    await expect(mongodbConnector.test(connection(), open)).resolves.toBeUndefined();
  });

  it('fails with AUTHENTICATION_FAILED on a wrong password, and never shows it', async () => {
    const wrong = `Wrong-${randomBytes(6).toString('hex')}`;
    const err = await failure(mongodbConnector.test(connection({}, wrong), open), 'AUTHENTICATION_FAILED');
    expect(err.message).toContain('check the user name and password');
    expect(err.message).not.toContain(wrong);
    // An unknown user fails the same way (the server does not say which was wrong).
    await failure(
      mongodbConnector.test(connection({ username: 'nobody-here' }, wrong), open),
      'AUTHENTICATION_FAILED',
    );
  });

  it.skipIf(Boolean(process.env.MONGO_URL))(
    'fails with CONNECTION_FAILED when TLS meets a server without it',
    async () => {
      const err = await failure(mongodbConnector.test(connection({ tls: true }), open), 'CONNECTION_FAILED');
      expect(err.message).toContain(target.hosts[0]);
      expect(err.message).toContain('TLS');
    },
    30_000,
  );

  it('refuses loopback hosts unless the data source allows private hosts', async () => {
    if (!target.real) await failure(mongodbConnector.test(connection(), closed), 'PRIVATE_HOST_BLOCKED');
    await failure(
      mongodbConnector.test(connection({ hosts: ['169.254.169.254'] }), open),
      'PRIVATE_HOST_BLOCKED',
    );
  });
});

describe('mongodb hosts announced by the server', () => {
  it.skipIf(Boolean(process.env.MONGO_URL))(
    'refuses a replica-set member the egress guard blocks',
    async () => {
      // 240.0.0.0/4 is reserved: never reachable, whatever allow_private_hosts says.
      const rs = await startMongoWire({ replicaSet: { name: 'rs0', otherMembers: ['240.0.0.1:27017'] } });
      try {
        const conn: MongoConnection = {
          config: mongodbConfigSchema.parse({
            hosts: [rs.host],
            database: DB,
            replica_set: 'rs0',
            tls: false,
            allow_private_hosts: true,
          }),
          credentials: {},
        };
        const err = await failure(mongodbConnector.test(conn, open), 'PRIVATE_HOST_BLOCKED');
        expect(err.message).toContain('240.0.0.1');
      } finally {
        await rs.close();
      }
    },
  );
});

describe('mongodb members announced by a hostile seed', () => {
  // The host in the connection string is reachable (the operator allowlists 127.0.0.1); the
  // member it announces, 127.0.0.2, is not. A listener there proves that no socket ever reaches it.
  const policy = { allowPrivate: false, allowCidrs: ['127.0.0.1/32'] };
  const ctx: ConnectorContext = { policy, limits: defaultLimits };

  it.skipIf(Boolean(process.env.MONGO_URL))(
    'never opens a connection to a blocked member, for any operation',
    async () => {
      const member = await startAcceptRecorder('127.0.0.2');
      const rs = await startMongoWire({
        replicaSet: { name: 'rs0', otherMembers: [`127.0.0.2:${member.port}`] },
      });
      try {
        const conn: MongoConnection = {
          config: mongodbConfigSchema.parse({
            hosts: [rs.host],
            database: DB,
            replica_set: 'rs0',
            tls: false,
          }),
          credentials: {},
        };
        const statement = mongodbStatementSchema.parse({
          type: 'mongodb',
          collection: 'orders',
          operation: 'find',
          filter: {},
        });
        for (const call of [
          () => mongodbConnector.test(conn, ctx),
          () => mongodbConnector.discover.importSchema(conn, ctx),
          () => mongodbConnector.query.execute(conn, statement, {}, ctx),
        ]) {
          const err = await failure(call(), 'PRIVATE_HOST_BLOCKED');
          expect(err.message).toContain('127.0.0.2');
        }
        // Monitors run on their own timers: give a late one the chance to show up.
        await new Promise((r) => setTimeout(r, 300));
        expect(member.accepted()).toBe(0);
      } finally {
        await rs.close();
        await member.close();
      }
    },
  );
});

describe('mongodb schema import', () => {
  it('lists collections with the unified field types of sampled documents', async () => {
    const schema = await mongodbConnector.discover.importSchema(connection(), open);
    expect(schema.schema_type).toBe('document');
    if (schema.schema_type !== 'document') return;
    expect(schema.type).toBe('mongodb');
    expect(schema.collections.map((c) => c.name)).toEqual(['many', 'orders']);
    const orders = schema.collections.find((c) => c.name === 'orders')!;
    const types = Object.fromEntries(orders.fields.map((f) => [f.name, f.type]));
    expect(types).toEqual({
      _id: 'objectId',
      n: 'int',
      region: 'string',
      qty: 'int',
      // 2.5 and 3 (an int from JavaScript) unify to the wider type.
      price: 'double',
      big: 'long',
      amount: 'decimal',
      at: 'date',
      tags: 'array',
      address: 'object',
      'address.city': 'string',
      'address.zip': 'string',
      code: 'int|string',
      blob: 'binData',
      nothing: 'null',
    });
  });
});

describe('mongodb query execution', () => {
  it('runs a find with bound parameters and converts BSON values losslessly', async () => {
    const r = await exec(
      {
        collection: 'orders',
        filter: { region: '{{region}}', qty: { $gte: '{{min}}' } },
        projection: { tags: 0, address: 0, blob: 0 },
        sort: { n: 1 },
      },
      { region: 'eu', min: 2 },
    );
    expect(r.result_type).toBe('mongodb');
    expect(r.truncated).toBe(false);
    expect(r.row_count).toBe(2);
    expect(r.payload.operation).toBe('find');
    expect(r.payload.documents[0]).toEqual({
      _id: OID.toHexString(),
      n: 1,
      region: 'eu',
      qty: 3,
      price: 2.5,
      big: '9007199254740993',
      amount: '12.10',
      at: '2026-01-05T10:00:00.000Z',
      code: 'A1',
      nothing: null,
    });
    expect(r.payload.documents[1]).toMatchObject({ n: 3, qty: 10 });
  });

  it('binds Extended JSON values and runs an aggregate', async () => {
    const byId = await exec(
      { collection: 'orders', filter: { _id: '{{id}}' }, projection: { n: 1 } },
      { id: { $oid: OID.toHexString() } },
    );
    expect(byId.payload.documents).toEqual([{ _id: OID.toHexString(), n: 1 }]);
    const r = await exec(
      {
        operation: 'aggregate',
        collection: 'orders',
        pipeline: [
          { $match: { region: '{{region}}' } },
          { $group: { _id: '$region', qty: { $sum: '$qty' }, orders: { $sum: 1 } } },
        ],
      },
      { region: 'eu' },
    );
    expect(r.payload.documents).toEqual([{ _id: 'eu', qty: 14, orders: 3 }]);
  });

  it('truncates at the row limit', async () => {
    const ctx = { ...open, limits: { ...defaultLimits, maxRows: 5 } };
    const r = await exec({ collection: 'many', sort: { i: 1 } }, {}, ctx);
    expect(r.truncated).toBe(true);
    expect(r.payload.documents).toHaveLength(5);
  });

  it('never lets a parameter become an operator or part of a text', async () => {
    const injected = await failure(
      exec({ collection: 'orders', filter: { region: '{{region}}' } }, { region: { $ne: null } }),
      'INVALID_STATEMENT',
    );
    expect(injected.message).toContain('operator');
    await failure(
      exec(
        { operation: 'aggregate', collection: 'orders', pipeline: [{ $project: { x: '{{f}}' } }] },
        { f: '$secretField' },
      ),
      'INVALID_STATEMENT',
    );
    await failure(exec({ collection: 'orders', filter: { region: '{{region}}' } }, {}), 'INVALID_STATEMENT');
    const bad = (statement: Record<string, unknown>) =>
      mongodbStatementSchema.safeParse({ type: 'mongodb', ...statement }).success;
    expect(bad({ collection: 'orders', filter: { region: 'e{{x}}' } })).toBe(false);
    expect(bad({ collection: 'orders', filter: { '{{field}}': 1 } })).toBe(false);
    expect(bad({ collection: 'orders', filter: { $where: 'this.qty > 1' } })).toBe(false);
    expect(
      bad({
        operation: 'aggregate',
        collection: 'orders',
        pipeline: [{ $match: { $expr: { $function: {} } } }],
      }),
    ).toBe(false);
    expect(bad({ operation: 'aggregate', collection: 'orders', filter: {} })).toBe(false);
    expect(bad({ collection: 'orders', filter: { region: '{{region}}' } })).toBe(true);
  });

  it('refuses writing stages on a read-only data source', async () => {
    const err = await failure(
      exec(
        { operation: 'aggregate', collection: 'orders', pipeline: [{ $match: {} }, { $out: 'copy' }] },
        {},
        { ...open, readOnly: true },
      ),
      'PERMISSION_DENIED',
    );
    expect(err.message).toContain('$out');
  });

  it('reports a server error as QUERY_FAILED', async () => {
    const err = await failure(
      exec({ operation: 'aggregate', collection: 'orders', pipeline: [{ $noSuchStage: {} }] }),
      'QUERY_FAILED',
    );
    expect(err.message).toContain('$noSuchStage');
  });
});
