import { connectors } from '@sluice/connectors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AcceptRecorder, startAcceptRecorder } from '../../../../../test/peers/accept-recorder';
import { type HttpApiPeer, startHttpApiPeer } from '../../../../../test/peers/http-api';
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

// Whoever may change a data source's config must not be able to send its stored secret to a
// server of their choosing: a change of where credentials go needs the credentials again.
describe('data sources: credentials do not follow a changed destination', () => {
  let t: TestApp;
  let owner: string;
  let legit: HttpApiPeer;
  let attacker: HttpApiPeer;
  const ds = '/organizations/acme/data-sources';
  const SECRET = 'canary-stored-secret-4e1f9a0c7b';
  const FRESH = 'fresh-token-given-with-the-move';

  beforeAll(async () => {
    t = await startTestApp({ env: { SLUICE_LOG_LEVEL: 'warn' } });
    owner = (await t.bootstrap('acme')).api_key;
    legit = await startHttpApiPeer();
    attacker = await startHttpApiPeer();
  });
  afterAll(async () => {
    await legit?.close();
    await attacker?.close();
    await t?.close();
  });

  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });
  const everything = (p: HttpApiPeer) => JSON.stringify(p.requests);

  it('declares, per connector, only fields its config has', () => {
    for (const c of connectors) {
      const shape = (c.configSchema as any).shape as Record<string, unknown>;
      for (const f of c.credentialDestination) expect(Object.keys(shape), `${c.type}.${f}`).toContain(f);
    }
  });

  it('refuses to move an HTTP source without its credentials, and sends nothing to the new host', async () => {
    const created = await call('POST', ds, {
      type: 'http',
      name: 'api',
      slug: 'api',
      config: { base_url: legit.url, allow_private_hosts: true },
      credentials: { bearer_token: SECRET },
    });
    expect(created.statusCode, created.body).toBe(201);
    const revision = created.json().connection_revision;

    for (const config of [{ base_url: attacker.url }, { openapi_url: `${attacker.url}/openapi.yaml` }]) {
      const moved = await call('PATCH', `${ds}/api`, { config });
      expect(moved.statusCode, moved.body).toBe(400);
      const err = moved.json().error;
      expect(err.code).toBe('VALIDATION_FAILED');
      expect(err.validation_errors[0]).toMatchObject({
        path: `config.${Object.keys(config)[0]}`,
        code: 'credentials_required',
      });
    }
    const unchanged = (await call('GET', `${ds}/api`)).json();
    expect(unchanged.config.base_url).toBe(legit.url);
    expect(unchanged.connection_revision).toBe(revision);

    // A change elsewhere in the config needs no credentials.
    expect((await call('PATCH', `${ds}/api`, { config: { timeout_seconds: 7 } })).statusCode).toBe(200);

    const tested = await call('POST', `${ds}/api/test-connection`);
    expect(tested.json().ok, tested.body).toBe(true);
    expect(legit.requests.at(-1)?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(attacker.requests).toHaveLength(0);

    // With the credentials in the same request, the move is fine: the new ones go there.
    const withCreds = await call('PATCH', `${ds}/api`, {
      config: { base_url: attacker.url },
      credentials: { bearer_token: FRESH },
    });
    expect(withCreds.statusCode, withCreds.body).toBe(200);
    expect(withCreds.json().connection_revision).toBeGreaterThan(revision);
    expect(withCreds.body).not.toContain(FRESH);
    await call('POST', `${ds}/api/test-connection`);
    expect(attacker.requests.at(-1)?.headers.authorization).toBe(`Bearer ${FRESH}`);
    expect(everything(attacker)).not.toContain(SECRET);

    // Credentials in a PATCH are checked like on create, and the event marks the write.
    const bad = await call('PATCH', `${ds}/api`, { credentials: { bearer_token: 1 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.validation_errors[0].path).toBe('credentials.bearer_token');
    const events = (await call('GET', '/organizations/acme/events?entity_slug=api&action=update')).json();
    expect(JSON.stringify(events)).not.toContain(FRESH);
  });

  it('asks for the password again when a PostgreSQL host or port changes', async () => {
    const created = await call('POST', ds, {
      type: 'postgres',
      name: 'pg',
      slug: 'pg',
      config: { host: '127.0.0.1', port: 5432, database: 'x', user: 'u', allow_private_hosts: true },
      credentials: { password: SECRET },
    });
    expect(created.statusCode, created.body).toBe(201);
    for (const [field, value] of [
      ['host', 'localhost'],
      ['port', 6543],
    ] as const) {
      const res = await call('PATCH', `${ds}/pg`, { config: { [field]: value } });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.validation_errors[0].path).toBe(`config.${field}`);
    }
    expect((await call('PATCH', `${ds}/pg`, { config: { database: 'y' } })).statusCode).toBe(200);
    const moved = await call('PATCH', `${ds}/pg`, {
      config: { host: 'localhost', port: 6543 },
      credentials: { password: 'another' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().config).toMatchObject({ host: 'localhost', port: 6543, database: 'y' });
  });

  it('lets a source that holds no secret move: an OAuth source not yet authorized', async () => {
    const created = await call('POST', ds, {
      type: 'github',
      name: 'gh',
      slug: 'gh',
      config: { owner: 'acme', repo: 'etl' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().credential.status).toBe('pending');
    const moved = await call('PATCH', `${ds}/gh`, { config: { base_url: 'https://ghe.example.com/api/v3' } });
    expect(moved.statusCode, moved.body).toBe(200);
    // It has no static credentials to send instead.
    const creds = await call('PATCH', `${ds}/gh`, { credentials: { token: 'x' } });
    expect(creds.statusCode).toBe(422);
  });
});
