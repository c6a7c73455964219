import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AcceptRecorder, startAcceptRecorder } from '../../../../../test/peers/accept-recorder';
import { type MongoWirePeer, startMongoWire } from '../../../../../test/peers/mongo-wire';
import { startTestApp, type TestApp } from '../../../../../test/support/app';

// A hostile MongoDB seed on loopback (reachable: the operator allowlists 127.0.0.1) announces a
// replica-set member at 127.0.0.2, which the egress guard blocks. A listener there records
// every connection: through the API, no socket may ever reach it, whatever the operation.
describe('data sources: replica-set discovery stays behind the egress guard', () => {
  let t: TestApp;
  let owner: string;
  let member: AcceptRecorder;
  let seed: MongoWirePeer;
  const org = '/organizations/acme';

  beforeAll(async () => {
    t = await startTestApp({
      worker: true,
      env: { SLUICE_LOG_LEVEL: 'warn', SLUICE_EGRESS_ALLOW_CIDRS: '127.0.0.1/32' },
    });
    owner = (await t.bootstrap('acme')).api_key;
    member = await startAcceptRecorder('127.0.0.2');
    seed = await startMongoWire({ replicaSet: { name: 'rs0', otherMembers: [`127.0.0.2:${member.port}`] } });
    const ds = await t.call('POST', `${org}/data-sources`, {
      token: owner,
      body: {
        type: 'mongodb',
        name: 'hostile',
        slug: 'hostile',
        config: { hosts: [seed.host], database: 'app', replica_set: 'rs0', tls: false },
        credentials: {},
      },
    });
    expect(ds.statusCode, ds.body).toBe(201);
  });
  afterAll(async () => {
    await seed?.close();
    await member?.close();
    await t?.close();
  });

  it('answers PRIVATE_HOST_BLOCKED for query execution without connecting to the member', async () => {
    const q = await t.call('POST', `${org}/queries`, {
      token: owner,
      body: {
        name: 'all',
        slug: 'all',
        data_source_slug: 'hostile',
        statement: { type: 'mongodb', collection: 'orders', operation: 'find', filter: {} },
      },
    });
    expect(q.statusCode, q.body).toBe(201);
    const res = await t.call('POST', `${org}/queries/all:execute`, {
      token: owner,
      body: { parameters: {} },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'failed', error: { code: 'PRIVATE_HOST_BLOCKED' } });
    expect(res.json().error.message).toContain('127.0.0.2');
    const tested = await t.call('POST', `${org}/data-sources/hostile/test-connection`, { token: owner });
    expect(tested.json().error?.code, tested.body).toBe('PRIVATE_HOST_BLOCKED');
    // Driver monitors run on timers: give a late connection attempt the chance to show up.
    await new Promise((r) => setTimeout(r, 300));
    expect(member.accepted()).toBe(0);
  });

  it('answers PRIVATE_HOST_BLOCKED for schema import without connecting to the member', async () => {
    const res = await t.call('POST', `${org}/data-sources/hostile/schema-import`, { token: owner });
    expect(res.statusCode, res.body).toBe(202);
    const until = Date.now() + 20_000;
    let ds: any;
    for (;;) {
      ds = (await t.call('GET', `${org}/data-sources/hostile`, { token: owner })).json();
      if (ds.schema_status !== 'importing') break;
      if (Date.now() > until) throw new Error('schema import did not finish');
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ds.schema_status).toBe('failed');
    expect(ds.schema_diagnostic.code).toBe('PRIVATE_HOST_BLOCKED');
    await new Promise((r) => setTimeout(r, 300));
    expect(member.accepted()).toBe(0);
  });
});
