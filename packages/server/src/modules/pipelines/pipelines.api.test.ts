import { pipelineSpecSchema, specHash } from '@sluice/engine';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { environments, pipelineRuns, pipelines } from '../../db/schema/index';

// Pipelines, versions (push, idempotency, prefix addressing) and derived data source refs.

const spec = {
  steps: [
    {
      slug: 'orders',
      kind: 'source',
      data_source_ref: 'shop-api',
      operation: { operation_type: 'http', path: '/orders' },
      response: { records_path: 'data' },
    },
    {
      slug: 'load',
      kind: 'sink',
      data_source_ref: 'warehouse',
      operation: { operation_type: 'sql', write: { table: 'orders' } },
    },
  ],
  edges: [{ from: 'orders', to: 'load' }],
};

describe('pipelines and versions', () => {
  let t: TestApp;
  let owner: string;
  let outsider: string;
  const project = '/organizations/acme/projects/shop';
  const base = `${project}/pipelines`;

  beforeAll(async () => {
    t = await startTestApp();
    const boot = await t.bootstrap('acme');
    owner = boot.api_key;
    expect(
      (await t.call('POST', '/organizations/acme/projects', { token: owner, body: { name: 'Shop' } }))
        .statusCode,
    ).toBe(201);
    // Another organization with a project of the same slug, and a key of its own.
    const pat = boot.personal_access_token;
    expect(
      (await t.call('POST', '/organizations', { token: pat, body: { name: 'Globex', slug: 'globex' } }))
        .statusCode,
    ).toBe(201);
    await t.call('POST', '/organizations/globex/projects', { token: pat, body: { name: 'Shop' } });
    outsider = (
      await t.call('POST', '/organizations/globex/api-keys', {
        token: pat,
        body: { name: 'k', role: 'owner' },
      })
    ).json().token;
  });
  afterAll(() => t?.close());

  const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });

  it('creates, lists, reads, updates and deletes pipelines', async () => {
    const created = await call('POST', base, { name: 'Orders Sync', description: 'shop to warehouse' });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      slug: 'orders-sync',
      name: 'Orders Sync',
      description: 'shop to warehouse',
      project_slug: 'shop',
      latest_spec_hash: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await call('POST', base, { name: 'x', slug: 'orders-sync' })).json().error.code).toBe('CONFLICT');
    expect((await call('POST', base, { name: '' })).json().error.code).toBe('ENTITY_NAME_INVALID');
    expect((await call('POST', base, { name: 'x', spec: {} })).statusCode).toBe(400);
    await call('POST', base, { name: 'Alpha', slug: 'alpha' });
    await call('POST', base, { name: 'Zulu', slug: 'zulu' });
    expect(
      (await call('POST', '/organizations/acme/projects/nope/pipelines', { name: 'x' })).statusCode,
    ).toBe(404);

    const list = (await call('GET', `${base}?sort_by=pipeline_name&order=asc&limit=2`)).json();
    expect(list.pipelines.map((p: any) => p.slug)).toEqual(['alpha', 'orders-sync']);
    expect(list.has_more).toBe(true);
    const rest = (
      await call('GET', `${base}?sort_by=pipeline_name&order=asc&limit=2&cursor=${list.next_cursor}`)
    ).json();
    expect(rest.pipelines.map((p: any) => p.slug)).toEqual(['zulu']);
    expect((await call('GET', `${base}?sort_by=run_created_at`)).statusCode).toBe(400);

    const patched = await call('PATCH', `${base}/alpha`, { name: 'Alpha Two', description: null });
    expect(patched.json()).toMatchObject({ slug: 'alpha', name: 'Alpha Two', description: null });
    expect((await call('PATCH', `${base}/alpha`, { slug: 'beta' })).statusCode).toBe(400);
    expect((await call('GET', `${base}/alpha`)).json().name).toBe('Alpha Two');

    // A pipeline with a run in progress stays; once the run ended it can go.
    const [alpha] = await t.rt.deps.db.select().from(pipelines).where(eq(pipelines.slug, 'alpha'));
    await call('POST', '/organizations/acme/environments', { name: 'Scratch', slug: 'scratch' });
    const [env] = await t.rt.deps.db.select().from(environments).where(eq(environments.slug, 'scratch'));
    const [run] = await t.rt.deps.db
      .insert(pipelineRuns)
      .values({
        organizationId: alpha.organizationId,
        pipelineId: alpha.id,
        environmentId: env.id,
        slug: 'run-1',
        specHash: 'x',
        state: 'running',
      })
      .returning();
    const refused = await call('DELETE', `${base}/alpha`);
    expect(refused.statusCode).toBe(409);
    await t.rt.deps.db.update(pipelineRuns).set({ state: 'succeeded' }).where(eq(pipelineRuns.id, run.id));
    expect((await call('DELETE', `${base}/alpha`)).statusCode).toBe(204);
    expect((await call('GET', `${base}/alpha`)).statusCode).toBe(404);

    const events = (await call('GET', '/organizations/acme/events?entity_type=pipeline')).json().events;
    expect(events.map((e: any) => e.action).sort()).toEqual([
      'create',
      'create',
      'create',
      'delete',
      'update',
    ]);
  });

  it('pushes versions idempotently and derives refs from the newest', async () => {
    const versions = `${base}/orders-sync/versions`;
    const first = await call('POST', versions, { spec });
    expect(first.statusCode).toBe(201);
    const expectedHash = specHash(pipelineSpecSchema.parse(spec));
    expect(first.json()).toEqual({
      spec_hash: expectedHash,
      spec: expect.any(Object),
      created_at: expect.any(String),
    });
    // Stored with defaults applied: what the hash covers.
    expect(first.json().spec.steps[0].operation.method).toBe('GET');
    expect(first.json().spec.inputs).toEqual({});

    // The same spec again, with key order changed and defaults spelled out: the same version.
    const again = await call('POST', versions, {
      spec: {
        inputs: {},
        edges: spec.edges,
        steps: [
          { ...spec.steps[0], operation: { path: '/orders', method: 'GET', operation_type: 'http' } },
          spec.steps[1],
        ],
      },
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect((await call('GET', `${base}/orders-sync`)).json().latest_spec_hash).toBe(expectedHash);

    const bad = await call('POST', versions, {
      spec: { steps: [{ slug: 'Bad Slug', kind: 'source', operation: { operation_type: 'http' } }] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('VALIDATION_FAILED');
    const paths = bad.json().error.validation_errors.map((e: any) => e.path);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p: string) => p.startsWith('spec.'))).toBe(true);
    expect(paths).toContain('spec.steps.0.slug');
    expect((await call('POST', versions, { spec, extra: 1 })).statusCode).toBe(400);

    const refs = `${base}/orders-sync/data-source-refs`;
    const listed = (await call('GET', `${refs}?sort_by=data_source_ref_name&order=asc`)).json();
    expect(listed.data_source_refs).toEqual([
      {
        pipeline_slug: 'orders-sync',
        slug: 'shop-api',
        name: 'shop-api',
        data_source_type: 'http',
        required_capabilities: ['pipeline_source'],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      expect.objectContaining({
        slug: 'warehouse',
        data_source_type: null,
        required_capabilities: ['pipeline_sink'],
      }),
    ]);
    expect((await call('GET', `${refs}/warehouse`)).json().slug).toBe('warehouse');
    expect((await call('GET', `${refs}/nope`)).json().error.message).toBe('data source ref not found');

    // v2: shop-api also receives the result; warehouse is gone (never bound, so deleted).
    const v2 = {
      ...spec,
      steps: [
        spec.steps[0],
        {
          slug: 'echo',
          kind: 'sink',
          data_source_ref: 'shop-api',
          operation: { operation_type: 'http', method: 'POST', path: '/echo', body: '{{input}}' },
        },
      ],
      edges: [{ from: 'orders', to: 'echo' }],
    };
    const second = await call('POST', versions, { spec: v2 });
    expect(second.statusCode).toBe(201);
    const after = (await call('GET', refs)).json().data_source_refs;
    expect(after.map((r: any) => [r.slug, r.required_capabilities])).toEqual([
      ['shop-api', ['pipeline_sink', 'pipeline_source']],
    ]);
    expect((await call('GET', `${base}/orders-sync`)).json().latest_spec_hash).toBe(second.json().spec_hash);

    const page1 = (await call('GET', `${versions}?limit=1`)).json();
    expect(page1.versions.map((v: any) => v.spec_hash)).toEqual([second.json().spec_hash]);
    expect(page1.next_cursor).toMatch(/_[0-9a-f]{16}$/);
    const page2 = (await call('GET', `${versions}?limit=1&cursor=${page1.next_cursor}`)).json();
    expect(page2.versions.map((v: any) => v.spec_hash)).toEqual([expectedHash]);
    expect(page2.has_more).toBe(false);
    const back = (await call('GET', `${versions}?limit=1&direction=prev&cursor=${page2.prev_cursor}`)).json();
    expect(back.versions.map((v: any) => v.spec_hash)).toEqual([second.json().spec_hash]);

    const versionEvents = (
      await call('GET', '/organizations/acme/events?entity_type=pipeline_version')
    ).json().events;
    expect(versionEvents).toHaveLength(2);
    expect(versionEvents[0].metadata).toMatchObject({
      pipeline_slug: 'orders-sync',
      refs_removed: ['warehouse'],
    });
  });

  it('addresses a version by full hash or unique prefix of 7+ characters', async () => {
    const versions = `${base}/zulu/versions`;
    // Two spec variations whose hashes share their first 7 characters (a birthday search).
    const parsed = pipelineSpecSchema.parse(spec);
    const seen = new Map<string, number>();
    let pair: [number, number] | null = null;
    const variant = (i: number) => ({
      ...parsed,
      steps: [{ ...parsed.steps[0], description: `variant ${i}` }, parsed.steps[1]],
    });
    for (let i = 0; !pair && i < 200_000; i++) {
      const prefix = specHash(variant(i)).slice(0, 7);
      const j = seen.get(prefix);
      if (j !== undefined) pair = [j, i];
      else seen.set(prefix, i);
    }
    expect(pair).not.toBeNull();
    const [a, b] = pair as [number, number];
    const ha = (await call('POST', versions, { spec: variant(a) })).json().spec_hash;
    const hb = (await call('POST', versions, { spec: variant(b) })).json().spec_hash;
    expect(ha.slice(0, 7)).toBe(hb.slice(0, 7));

    const get = (h: string) => call('GET', `${versions}/${h}`);
    expect((await get(ha)).json().spec_hash).toBe(ha);
    expect((await get(ha.toUpperCase())).json().spec_hash).toBe(ha);
    const ambiguous = await get(ha.slice(0, 7));
    expect(ambiguous.statusCode).toBe(409);
    expect(ambiguous.json().error.code).toBe('CONFLICT');
    let n = 7;
    while (ha[n - 1] === hb[n - 1]) n++;
    expect((await get(ha.slice(0, n))).json().spec_hash).toBe(ha);
    expect((await get(hb.slice(0, n))).json().spec_hash).toBe(hb);
    const short = await get(ha.slice(0, 6));
    expect(short.statusCode).toBe(400);
    expect(short.json().error.validation_errors[0].path).toBe('spec_hash');
    expect((await get('fffffff0')).json().error.message).toBe('pipeline version not found');
    expect((await get('not-a-hash')).statusCode).toBe(404);
    expect((await get('a'.repeat(65))).statusCode).toBe(400);
  });

  it('hides every pipeline route from another organization', async () => {
    for (const [method, path, body] of [
      ['GET', base],
      ['POST', base, { name: 'x' }],
      ['GET', `${base}/orders-sync`],
      ['PATCH', `${base}/orders-sync`, { name: 'x' }],
      ['DELETE', `${base}/orders-sync`],
      ['GET', `${base}/orders-sync/versions`],
      ['POST', `${base}/orders-sync/versions`, { spec }],
      ['GET', `${base}/orders-sync/data-source-refs`],
      ['GET', `${base}/orders-sync/data-source-refs/shop-api`],
    ] as const) {
      const res = await t.call(method, path, { token: outsider, body });
      expect(res.statusCode, `${method} ${path}`).toBe(404);
    }
    // Its own project of the same slug has no such pipeline.
    const own = await t.call('GET', '/organizations/globex/projects/shop/pipelines/orders-sync', {
      token: outsider,
    });
    expect(own.json().error.message).toBe('pipeline not found');
    expect((await call('GET', `${base}/orders-sync`)).statusCode).toBe(200);
  });
});
