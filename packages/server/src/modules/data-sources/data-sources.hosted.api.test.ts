import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpApiPeer, startHttpApiPeer } from '../../../../../test/peers/http-api';
import { startTestApp, type TestApp } from '../../../../../test/support/app';

// A hosted deployment never reaches loopback or private networks, whatever a data source says.
describe('data sources in a hosted deployment', () => {
  let t: TestApp;
  let owner: string;
  let peer: HttpApiPeer;
  const org = '/organizations/acme/data-sources';

  beforeAll(async () => {
    peer = await startHttpApiPeer();
    t = await startTestApp({ env: { SLUICE_DEPLOYMENT: 'hosted' }, worker: true });
    owner = (await t.bootstrap('acme')).api_key;
  });
  afterAll(async () => {
    await t?.close();
    await peer?.close();
  });

  it('rejects allow_private_hosts: true at create and at update', async () => {
    for (const [type, config, credentials] of [
      ['http', { base_url: peer.url, allow_private_hosts: true }, {}],
      [
        'postgres',
        { host: '10.0.0.5', database: 'd', user: 'u', allow_private_hosts: true },
        { password: 'p' },
      ],
    ] as const) {
      const res = await t.call('POST', org, {
        token: owner,
        body: { type, name: 'inside', config, credentials },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
      expect(res.json().error.validation_errors[0].path).toBe('config.allow_private_hosts');
    }
    const created = await t.call('POST', org, {
      token: owner,
      body: {
        type: 'http',
        name: 'loopback',
        config: { base_url: peer.url, openapi_url: `${peer.url}/openapi.yaml` },
        credentials: {},
      },
    });
    expect(created.statusCode).toBe(201);
    const patch = await t.call('PATCH', `${org}/loopback`, {
      token: owner,
      body: { config: { allow_private_hosts: true } },
    });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().error.validation_errors[0].path).toBe('config.allow_private_hosts');
  });

  it('blocks loopback hosts in tests and imports', async () => {
    const before = peer.requests.length;
    const res = await t.call('POST', `${org}/loopback/test-connection`, { token: owner });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, error: { code: 'PRIVATE_HOST_BLOCKED' } });
    const accepted = await t.call('POST', `${org}/loopback/schema-import`, { token: owner });
    expect(accepted.statusCode).toBe(202);
    let ds: any;
    for (let i = 0; i < 75; i++) {
      ds = (await t.call('GET', `${org}/loopback`, { token: owner })).json();
      if (ds.schema_status !== 'importing') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ds.schema_status).toBe('failed');
    expect(ds.schema_diagnostic.code).toBe('PRIVATE_HOST_BLOCKED');
    expect(peer.requests.length).toBe(before);
  });
});
