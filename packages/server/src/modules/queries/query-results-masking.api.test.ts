import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpApiPeer, startHttpApiPeer } from '../../../../../test/peers/http-api';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { queryExecutions } from '../../db/schema/index';

// A remote that reflects its request (Authorization included) must not get the data source's
// credentials into stored or returned query results, which every queries.read holder can see.
describe('query results never carry the data source credentials', () => {
  let t: TestApp;
  let owner: string;
  let peer: HttpApiPeer;
  const base = '/organizations/acme';
  const TOKEN = 'canary-bearer-7f3a9c2e51d04b68';
  const USER = 'etl-user';
  const PASSWORD = 'canary-basic-pw-0b2d7e19';

  beforeAll(async () => {
    t = await startTestApp({ env: { SLUICE_LOG_LEVEL: 'warn' } });
    owner = (await t.bootstrap('acme')).api_key;
    peer = await startHttpApiPeer();
  });
  afterAll(async () => {
    await peer?.close();
    await t?.close();
  });

  const call = (method: string, path: string, body?: unknown) =>
    t.call(method, `${base}${path}`, { token: owner, body });

  async function echoQuery(slug: string, credentials: Record<string, unknown>) {
    const ds = await call('POST', '/data-sources', {
      type: 'http',
      name: slug,
      slug,
      config: { base_url: peer.url, allow_private_hosts: true },
      credentials,
    });
    expect(ds.statusCode, ds.body).toBe(201);
    const q = await call('POST', '/queries', {
      name: slug,
      slug,
      data_source_slug: slug,
      statement: { type: 'http', method: 'GET', path: '/echo', headers: { 'x-note': 'hello' } },
    });
    expect(q.statusCode, q.body).toBe(201);
    const res = await call('POST', `/queries/${slug}:execute`, { parameters: {} });
    expect(res.statusCode, res.body).toBe(200);
    return res;
  }

  async function expectAbsent(secrets: string[], slug: string, executionSlug: string) {
    const got = await call('GET', `/query-executions/${executionSlug}`);
    const list = await call('GET', `/queries/${slug}/executions`);
    const stored = JSON.stringify(await t.rt.deps.db.select().from(queryExecutions));
    for (const text of [got.body, list.body, stored]) {
      for (const s of secrets) expect(text).not.toContain(s);
    }
  }

  it('masks a reflected bearer token', async () => {
    const res = await echoQuery('echo-bearer', { bearer_token: TOKEN });
    // The remote did receive it: this is the echo the masking has to catch.
    expect(peer.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const exec = res.json();
    expect(exec.status).toBe('succeeded');
    expect(res.body).not.toContain(TOKEN);
    expect(res.body).toContain('Bearer ****');
    expect(res.body).toContain('hello');
    await expectAbsent([TOKEN], 'echo-bearer', exec.slug);
  });

  it('masks reflected Basic credentials, also in their base64 form', async () => {
    const res = await echoQuery('echo-basic', { username: USER, password: PASSWORD });
    const basic = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
    expect(peer.requests.at(-1)?.headers.authorization).toBe(`Basic ${basic}`);
    expect(res.body).not.toContain(basic);
    expect(res.body).toContain('Basic ****');
    await expectAbsent([basic, PASSWORD], 'echo-basic', res.json().slug);
  });
});
