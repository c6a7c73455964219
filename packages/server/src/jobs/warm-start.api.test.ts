import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/support/app';
import { knownPlanOrders } from './run-prepare';
import { warmStart } from './warm-start';

// A worker's warm start loads what the active deployments' runs need, across organizations,
// and nothing for a pipeline that is only saved, or no longer deployed.

const spec = (withTransform: boolean) => ({
  steps: [
    {
      slug: 'orders',
      kind: 'source',
      data_source_ref: 'shop-api',
      operation: { operation_type: 'http', method: 'GET', path: '/orders' },
    },
    ...(withTransform
      ? [
          {
            slug: 'clean',
            kind: 'transform',
            operation: { operation_type: 'sql', sql: 'SELECT id FROM orders' },
          },
        ]
      : []),
    {
      slug: 'load',
      kind: 'sink',
      data_source_ref: 'warehouse',
      operation: { operation_type: 'sql', write: { table: 'orders', mode: 'insert' } },
    },
  ],
  edges: withTransform
    ? [
        { from: 'orders', to: 'clean' },
        { from: 'clean', to: 'load' },
      ]
    : [{ from: 'orders', to: 'load' }],
});

describe('a worker warm start', () => {
  let t: TestApp;
  const tokens: Record<string, string> = {};
  const call = (org: string, method: string, url: string, body?: unknown) =>
    t.call(method, `/organizations/${org}${url}`, { token: tokens[org], body });
  const ok = async (org: string, method: string, url: string, body?: unknown) => {
    const res = await call(org, method, url, body);
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.body ? res.json() : null;
  };

  /** A pipeline `slug` of source type `sourceType` into PostgreSQL, saved in project shop. */
  async function save(org: string, slug: string, sourceType: 'http' | 'mysql', withTransform: boolean) {
    const s = spec(withTransform);
    if (sourceType === 'mysql')
      s.steps[0] = {
        ...s.steps[0],
        operation: { operation_type: 'sql', sql: 'SELECT id FROM orders' } as never,
      };
    await ok(org, 'POST', '/projects/shop/pipelines', { name: slug, slug });
    return (await ok(org, 'POST', `/projects/shop/pipelines/${slug}/versions`, { spec: s }))
      .spec_hash as string;
  }

  async function deploy(org: string, slug: string, hash: string) {
    const pe = '/projects/shop/environments/dev';
    for (const ref of ['shop-api', 'warehouse'])
      await ok(org, 'PUT', `${pe}/pipelines/${slug}/data-source-bindings/${ref}`, { data_source_slug: ref });
    await ok(org, 'POST', `${pe}/pipeline-validation`, { pipeline_slug: slug, spec_hash: hash });
    await ok(org, 'POST', `${pe}/pipelines/${slug}:deploy`, { spec_hash: hash });
  }

  let pat = '';
  async function organization(org: string, sourceType: 'http' | 'mysql') {
    if (!pat) {
      const boot = await t.bootstrap(org);
      pat = boot.personal_access_token;
      tokens[org] = boot.api_key;
    } else {
      await t.call('POST', '/organizations', { token: pat, body: { name: org, slug: org } });
      const key = await t.call('POST', `/organizations/${org}/api-keys`, {
        token: pat,
        body: { name: 'k', role: 'owner' },
      });
      tokens[org] = key.json().token;
    }
    await ok(org, 'POST', '/environments', { name: 'Dev', slug: 'dev' });
    await ok(org, 'POST', '/projects', { name: 'Shop' });
    await ok(org, 'PUT', '/projects/shop/environments/dev');
    await ok(
      org,
      'POST',
      '/data-sources',
      sourceType === 'http'
        ? {
            type: 'http',
            name: 'shop-api',
            slug: 'shop-api',
            config: { base_url: 'https://shop.example' },
            credentials: {},
          }
        : {
            type: 'mysql',
            name: 'shop-api',
            slug: 'shop-api',
            config: { host: 'db.example', database: 'shop', user: 'etl' },
            credentials: { password: 'not-used' },
          },
    );
    await ok(org, 'POST', '/data-sources', {
      type: 'postgres',
      name: 'warehouse',
      slug: 'warehouse',
      config: { host: 'db.example', database: 'wh', user: 'etl' },
      credentials: { password: 'not-used' },
    });
  }

  beforeAll(async () => {
    t = await startTestApp();
    await organization('acme', 'http');
    await organization('globex', 'mysql');
  });
  afterAll(() => t?.close());

  it('loads nothing while no pipeline is deployed', async () => {
    await save('acme', 'orders', 'http', true);
    expect(await warmStart(t.rt.deps)).toMatchObject({
      types: [],
      transforms: false,
      exercised: null,
      exercisedThrough: null,
      planned: 0,
      failed: [],
    });
  });

  it("loads the deployed pipelines' kinds of every organization, and transforms when one has a step", async () => {
    const plain = await save('globex', 'copy', 'mysql', false);
    await deploy('globex', 'copy', plain);
    expect(await warmStart(t.rt.deps)).toMatchObject({
      types: ['mysql', 'postgres'],
      transforms: false,
      exercised: null,
      exercisedThrough: null,
      planned: 1,
      failed: [],
    });
    // Planned ahead of its first run: the fetch that claims it resets its steps too.
    expect(Object.entries(knownPlanOrders()).filter(([k]) => k.endsWith(`:${plain}`))).toEqual([
      [expect.any(String), ['orders', 'load']],
    ]);
    const [version] = (await ok('acme', 'GET', '/projects/shop/pipelines/orders/versions')).versions;
    await deploy('acme', 'orders', version.spec_hash);
    expect(await warmStart(t.rt.deps)).toMatchObject({
      types: ['http', 'mysql', 'postgres'],
      transforms: true,
      // A transform of made-up records ran to its end, every row through DuckDB's CSV, the
      // records read through the HTTP source from the worker's own server.
      exercised: 6000,
      exercisedThrough: 'http',
      planned: 2,
      failed: [],
    });
    // The most recently deployed last.
    expect(Object.entries(knownPlanOrders()).at(-1)).toEqual([
      expect.stringMatching(new RegExp(`:${version.spec_hash}$`)),
      ['orders', 'clean', 'load'],
    ]);
  });

  it('forgets a pipeline once it is undeployed', async () => {
    await ok('acme', 'POST', '/projects/shop/environments/dev/pipelines/orders:undeploy', {});
    expect(await warmStart(t.rt.deps)).toMatchObject({
      types: ['mysql', 'postgres'],
      transforms: false,
      planned: 1,
    });
  });
});
