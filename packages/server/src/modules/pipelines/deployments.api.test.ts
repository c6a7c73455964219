import { pipelineSpecSchema, specHash } from '@sluice/engine';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { environments, pipelines } from '../../db/schema/index';
import { findActiveDeployment } from './deployments.service';

// Bindings, validation (one crafted spec per finding code), deploy and the deployments list.

const source = {
  slug: 'orders',
  kind: 'source',
  data_source_ref: 'shop-api',
  operation: {
    operation_type: 'http',
    path: '/orders',
    query_params: { region: '{{runtime.env.REGION}}' },
    headers: { 'X-Api-Key': '{{runtime.secrets.SHOP_TOKEN}}' },
  },
};
const clean = {
  slug: 'clean',
  kind: 'transform',
  operation: { operation_type: 'sql', sql: 'SELECT id, lower(email) AS email FROM orders' },
};
const load = {
  slug: 'load',
  kind: 'sink',
  data_source_ref: 'warehouse',
  operation: { operation_type: 'sql', write: { table: 'orders', mode: 'upsert', key: ['id'] } },
};
const edges = [
  { from: 'orders', to: 'clean' },
  { from: 'clean', to: 'load' },
];
const spec = { steps: [source, clean, load], edges };

describe('bindings, validation and deployment', () => {
  let t: TestApp;
  let owner: string;
  let outsider: string;
  const org = '/organizations/acme';
  const staging = `${org}/projects/shop/environments/staging`;
  const prod = `${org}/projects/shop/environments/prod`;
  const pipeline = `${org}/projects/shop/pipelines/orders`;
  let v1: string;

  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });
  const bind = (pe: string, ref: string, body: Record<string, unknown>, qs = '') =>
    call('PUT', `${pe}/pipelines/orders/data-source-bindings/${ref}${qs}`, body);
  const validate = async (pe: string, body: Record<string, unknown>) => {
    const res = await call('POST', `${pe}/pipeline-validation`, { pipeline_slug: 'orders', ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const codes = (v: { findings: { code: string }[] }) => v.findings.map((f) => f.code).sort();
  const dataSource = async (body: Record<string, unknown>) =>
    expect((await call('POST', `${org}/data-sources`, body)).statusCode).toBe(201);

  beforeAll(async () => {
    t = await startTestApp();
    const boot = await t.bootstrap('acme');
    owner = boot.api_key;
    await call('POST', `${org}/environments`, { name: 'Staging', slug: 'staging' });
    await call('POST', `${org}/environments`, { name: 'Production', slug: 'prod', protected: true });
    await call('POST', `${org}/environments`, { name: 'Elsewhere', slug: 'elsewhere' });
    await call('POST', `${org}/projects`, { name: 'Shop' });
    await call('PUT', `${org}/projects/shop/environments/staging`);
    await call('PUT', `${org}/projects/shop/environments/prod`, {
      protected_environment_confirmation: 'prod',
    });
    const http = (slug: string) => ({
      type: 'http',
      name: slug,
      slug,
      config: { base_url: 'https://shop.example' },
      credentials: {},
    });
    const pg = (slug: string, readOnly = false) => ({
      type: 'postgres',
      name: slug,
      slug,
      config: { host: 'db.example', database: 'wh', user: 'etl' },
      credentials: { password: 'not-used' },
      read_only: readOnly,
    });
    await dataSource(http('shop-api'));
    await dataSource(pg('warehouse'));
    await dataSource(pg('warehouse-ro', true));
    await dataSource(pg('legacy'));
    await call('PATCH', `${org}/data-sources/legacy`, { is_active: false });
    await call('PUT', `${org}/environments/staging/secrets/SHOP_TOKEN`, { value: 'canary-secret-value' });
    await call('POST', `${org}/projects/shop/pipelines`, { name: 'Orders', slug: 'orders' });
    v1 = (await call('POST', `${pipeline}/versions`, { spec })).json().spec_hash;

    const pat = boot.personal_access_token;
    await t.call('POST', '/organizations', { token: pat, body: { name: 'Globex', slug: 'globex' } });
    outsider = (
      await t.call('POST', '/organizations/globex/api-keys', {
        token: pat,
        body: { name: 'k', role: 'owner' },
      })
    ).json().token;
  });
  afterAll(() => t?.close());

  it('binds refs per environment, refusing incompatible types and unconfirmed protected changes', async () => {
    expect((await call('GET', `${staging}/data-source-bindings`)).json().data_source_bindings).toEqual([]);
    const wrong = await bind(staging, 'shop-api', { data_source_slug: 'warehouse' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error.code).toBe('VALIDATION_FAILED');
    expect(wrong.json().error.validation_errors[0].path).toBe('data_source_slug');
    expect((await bind(staging, 'warehouse', { data_source_slug: 'shop-api' })).statusCode).toBe(400);

    const ok = await bind(staging, 'shop-api', { data_source_slug: 'shop-api' });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toEqual({
      pipeline_slug: 'orders',
      data_source_ref_slug: 'shop-api',
      data_source_ref_name: 'shop-api',
      environment_slug: 'staging',
      data_source_slug: 'shop-api',
      data_source_name: 'shop-api',
      data_source_type: 'http',
      data_source_active: true,
      data_source_read_only: false,
      bound_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await bind(staging, 'nope', { data_source_slug: 'shop-api' })).json().error.message).toBe(
      'data source ref not found',
    );
    expect((await bind(staging, 'shop-api', { data_source_slug: 'nope' })).json().error.message).toBe(
      'data source not found',
    );
    // An environment the project has not enabled.
    const elsewhere = `${org}/projects/shop/environments/elsewhere`;
    expect((await bind(elsewhere, 'shop-api', { data_source_slug: 'shop-api' })).statusCode).toBe(404);

    const unconfirmed = await bind(prod, 'warehouse', { data_source_slug: 'warehouse' });
    expect(unconfirmed.statusCode).toBe(409);
    expect(unconfirmed.json().error.code).toBe('PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED');
    expect(
      (
        await bind(
          prod,
          'warehouse',
          { data_source_slug: 'warehouse' },
          '?protected_environment_confirmation=prod',
        )
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await bind(prod, 'shop-api', {
          data_source_slug: 'shop-api',
          protected_environment_confirmation: 'prod',
        })
      ).statusCode,
    ).toBe(201);
    const unbind = `${prod}/pipelines/orders/data-source-bindings/shop-api`;
    expect((await call('DELETE', unbind)).statusCode).toBe(409);
    expect((await call('DELETE', `${unbind}?protected_environment_confirmation=prod`)).statusCode).toBe(204);
    expect((await call('DELETE', `${unbind}?protected_environment_confirmation=prod`)).statusCode).toBe(404);

    const listed = (await call('GET', `${prod}/data-source-bindings?pipeline_slug=orders`)).json();
    expect(listed.data_source_bindings.map((b: any) => [b.data_source_ref_slug, b.data_source_slug])).toEqual(
      [['warehouse', 'warehouse']],
    );
    expect(
      (await call('GET', `${prod}/data-source-bindings?pipeline_slug=other`)).json().data_source_bindings,
    ).toEqual([]);
    const events = (await call('GET', `${org}/events?entity_type=data_source_binding`)).json().events;
    expect(events.map((e: any) => e.action).sort()).toEqual(['create', 'create', 'create', 'delete']);
  });

  it('reports each environment problem of a version as a finding', async () => {
    // warehouse unbound in staging; REGION missing; SHOP_TOKEN exists.
    let v = await validate(staging, { spec_hash: v1.slice(0, 7) });
    expect(v).toMatchObject({
      pipeline_slug: 'orders',
      environment_slug: 'staging',
      spec_hash: v1,
      valid: false,
    });
    expect(v.slug).toMatch(/^val-/);
    expect(codes(v)).toEqual(['REF_UNBOUND', 'VARIABLE_MISSING']);
    expect(v.findings).toContainEqual({
      code: 'VARIABLE_MISSING',
      message: expect.stringContaining('REGION'),
      path: 'steps[0].operation.query_params.region',
      severity: 'error',
    });
    expect(v.findings.find((f: any) => f.code === 'REF_UNBOUND').path).toBe('steps[2].data_source_ref');
    expect((await call('GET', `${staging}/pipeline-validations/${v.slug}`)).json()).toEqual(v);
    expect((await call('GET', `${prod}/pipeline-validations/${v.slug}`)).statusCode).toBe(404);

    await call('PUT', `${org}/environments/staging/variables/REGION`, { value: 'eu' });
    await bind(staging, 'warehouse', { data_source_slug: 'warehouse-ro' });
    expect(codes(await validate(staging, { spec_hash: v1 }))).toContain('SINK_READ_ONLY');
    await bind(staging, 'warehouse', { data_source_slug: 'legacy' });
    expect(codes(await validate(staging, { spec_hash: v1 }))).toContain('DATA_SOURCE_INACTIVE');
    await bind(staging, 'warehouse', { data_source_slug: 'warehouse' });
    // In prod: shop-api unbound, no SHOP_TOKEN secret, no REGION variable.
    expect(codes(await validate(prod, { spec_hash: v1 }))).toEqual(
      expect.arrayContaining(['REF_UNBOUND', 'SECRET_MISSING', 'VARIABLE_MISSING']),
    );

    v = await validate(staging, { spec_hash: v1 });
    expect(v.findings).toEqual([]);
    expect(v.valid).toBe(true);
    expect(t.logs()).not.toContain('canary-secret-value');
  });

  it('checks drafts without pushing them: schema, graph, refs, types, SQL', async () => {
    const draft = (steps: unknown[], e: unknown[] = []) => validate(staging, { spec: { steps, edges: e } });

    const schema = await draft([]);
    expect(codes(schema)).toEqual(['SCHEMA_INVALID']);
    expect(schema.spec_hash).toBe(specHash({ steps: [], edges: [] }));
    const badField = await validate(staging, { spec: { steps: [{ ...source, kind: 'pump' }] } });
    expect(badField.findings[0]).toMatchObject({ code: 'SCHEMA_INVALID', path: 'steps[0].kind' });

    const cycle = await draft(
      [source, clean, { ...clean, slug: 'again' }, load],
      [...edges, { from: 'clean', to: 'again' }, { from: 'again', to: 'clean' }],
    );
    expect(codes(cycle)).toContain('CYCLE');

    const conflict = await draft(
      [source, { ...load, data_source_ref: 'shop-api' }],
      [{ from: 'orders', to: 'load' }],
    );
    expect(codes(conflict)).toContain('REF_TYPE_CONFLICT');

    // shop-api is bound to an HTTP source; a SQL source through it needs postgres & co.
    const mismatch = await draft(
      [
        {
          slug: 'orders',
          kind: 'source',
          data_source_ref: 'shop-api',
          operation: { operation_type: 'sql', sql: 'SELECT 1' },
        },
        load,
      ],
      [{ from: 'orders', to: 'load' }],
    );
    expect(codes(mismatch)).toContain('DATA_SOURCE_TYPE_MISMATCH');

    const sql = await draft(
      [source, { ...clean, operation: { operation_type: 'sql', sql: 'SELEC id FRM orders' } }, load],
      edges,
    );
    expect(sql.findings).toContainEqual(
      expect.objectContaining({ code: 'SQL_INVALID', path: 'steps[1].operation.sql', severity: 'error' }),
    );
    const two = await draft(
      [source, { ...clean, operation: { operation_type: 'sql', sql: 'SELECT 1; SELECT 2' } }, load],
      edges,
    );
    expect(codes(two)).toContain('SQL_INVALID');
    const templated = await draft(
      [
        source,
        {
          ...clean,
          operation: {
            operation_type: 'sql',
            sql: 'SELECT * FROM orders WHERE region = {{runtime.env.REGION}}',
          },
        },
        load,
      ],
      edges,
    );
    expect(codes(templated)).not.toContain('SQL_INVALID');

    // A draft identical to v1 has v1's hash; nothing was pushed by any of this.
    expect((await validate(staging, { spec })).spec_hash).toBe(v1);
    expect((await call('GET', `${pipeline}/versions`)).json().versions).toHaveLength(1);

    // Exactly one of spec_hash and spec: the body is a oneOf, and its message says the rule.
    for (const body of [{}, { spec_hash: v1, spec }]) {
      const res = await call('POST', `${staging}/pipeline-validation`, { pipeline_slug: 'orders', ...body });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.validation_errors).toEqual([
        {
          path: '(root)',
          code: 'invalid_union',
          message: 'send exactly one of spec_hash (a pushed version) and spec (a draft)',
        },
      ]);
    }
    // A body that picks one member gets that member's field errors.
    const wrongType = await call('POST', `${staging}/pipeline-validation`, {
      pipeline_slug: 'orders',
      spec: 3,
    });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error.validation_errors.map((e: any) => e.path)).toEqual(['spec']);
    const noSlug = await call('POST', `${staging}/pipeline-validation`, { spec_hash: v1 });
    expect(noSlug.json().error.validation_errors.map((e: any) => e.path)).toEqual(['pipeline_slug']);
    const missing = await call('POST', `${staging}/pipeline-validation`, {
      pipeline_slug: 'nope',
      spec_hash: v1,
    });
    expect(missing.json().error.message).toBe('pipeline not found');
  });

  it('deploys only a version whose latest validation in that environment passed', async () => {
    const deploy = (pe: string, body: Record<string, unknown>) =>
      call('POST', `${pe}/pipelines/orders:deploy`, body);
    const v2spec = { ...spec, steps: [source, { ...clean, description: 'v2' }, load] };
    const v2 = (await call('POST', `${pipeline}/versions`, { spec: v2spec })).json().spec_hash;
    const unvalidated = await deploy(staging, { spec_hash: v2 });
    expect(unvalidated.statusCode).toBe(409);
    expect(unvalidated.json().error).toMatchObject({
      code: 'CONFLICT',
      message: 'validate this version in staging first',
    });

    // Failing: unbind the sink, validate, rebind.
    await call('DELETE', `${staging}/pipelines/orders/data-source-bindings/warehouse`);
    expect((await validate(staging, { spec_hash: v2 })).valid).toBe(false);
    await bind(staging, 'warehouse', { data_source_slug: 'warehouse' });
    expect((await deploy(staging, { spec_hash: v2 })).json().error.code).toBe('CONFLICT');
    expect((await deploy(prod, { spec_hash: v1 })).json().error.code).toBe(
      'PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED',
    );
    expect(
      (await deploy(prod, { spec_hash: v1, protected_environment_confirmation: 'prod' })).statusCode,
    ).toBe(409);
    expect((await deploy(staging, { spec_hash: 'abc' })).statusCode).toBe(400);

    const passing = await validate(staging, { spec_hash: v1 });
    expect(passing.valid, JSON.stringify(passing.findings)).toBe(true);
    const first = await deploy(staging, { spec_hash: v1.slice(0, 8) });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      slug: expect.stringMatching(/^dep-/),
      pipeline_slug: 'orders',
      environment_slug: 'staging',
      spec_hash: v1,
      validation_slug: passing.slug,
      active: true,
      deployed_by: { actor_type: 'api_key', actor_slug: expect.any(String) },
      created_at: expect.any(String),
    });
    const repeat = await deploy(staging, { spec_hash: v1 });
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json().slug).toBe(first.json().slug);

    expect((await validate(staging, { spec_hash: v2 })).valid).toBe(true);
    const second = await deploy(staging, { spec_hash: v2 });
    expect(second.statusCode).toBe(201);
    const list = (await call('GET', `${staging}/deployments?pipeline_slug=orders`)).json();
    expect(list.deployments.map((d: any) => [d.spec_hash, d.active])).toEqual([
      [v2, true],
      [v1, false],
    ]);
    expect((await call('GET', `${prod}/deployments`)).json().deployments).toEqual([]);
    const page = (await call('GET', `${staging}/deployments?limit=1`)).json();
    expect(page.has_more).toBe(true);

    const [p] = await t.rt.deps.db.select().from(pipelines).where(eq(pipelines.slug, 'orders'));
    const [env] = await t.rt.deps.db.select().from(environments).where(eq(environments.slug, 'staging'));
    const active = await findActiveDeployment(t.rt.deps.db, p.id, env.id);
    expect(active).toMatchObject({ slug: second.json().slug, specHash: v2 });
    expect(active?.spec).toEqual(pipelineSpecSchema.parse(v2spec));
    const events = (await call('GET', `${org}/events?entity_type=pipeline_deployment`)).json().events;
    expect(events.map((e: any) => [e.action, e.metadata.spec_hash])).toEqual([
      ['deploy', v2],
      ['deploy', v1],
    ]);
  });

  it('keeps a ref a newer version dropped while it is still bound', async () => {
    const renamed = { ...spec, steps: [source, clean, { ...load, data_source_ref: 'dwh' }] };
    expect((await call('POST', `${pipeline}/versions`, { spec: renamed })).statusCode).toBe(201);
    const refs = async () =>
      (await call('GET', `${pipeline}/data-source-refs?sort_by=data_source_ref_name&order=asc`))
        .json()
        .data_source_refs.map((r: any) => r.slug);
    expect(await refs()).toEqual(['dwh', 'shop-api', 'warehouse']);
    // The kept ref still binds only what its operations need (from the newest version using it).
    expect((await bind(staging, 'warehouse', { data_source_slug: 'shop-api' })).statusCode).toBe(400);
    await call('DELETE', `${staging}/pipelines/orders/data-source-bindings/warehouse`);
    await call(
      'DELETE',
      `${prod}/pipelines/orders/data-source-bindings/warehouse?protected_environment_confirmation=prod`,
    );
    const again = {
      ...renamed,
      steps: [source, clean, { ...load, data_source_ref: 'dwh', description: 'v4' }],
    };
    expect((await call('POST', `${pipeline}/versions`, { spec: again })).statusCode).toBe(201);
    expect(await refs()).toEqual(['dwh', 'shop-api']);
  });

  it('hides environment routes from another organization', async () => {
    for (const [method, path, body] of [
      ['GET', `${staging}/data-source-bindings`],
      ['PUT', `${staging}/pipelines/orders/data-source-bindings/shop-api`, { data_source_slug: 'shop-api' }],
      ['DELETE', `${staging}/pipelines/orders/data-source-bindings/shop-api`],
      ['POST', `${staging}/pipeline-validation`, { pipeline_slug: 'orders', spec_hash: v1 }],
      ['POST', `${staging}/pipelines/orders:deploy`, { spec_hash: v1 }],
      ['GET', `${staging}/deployments`],
    ] as const) {
      const res = await t.call(method, path, { token: outsider, body });
      expect(res.statusCode, `${method} ${path}`).toBe(404);
    }
  });
});
