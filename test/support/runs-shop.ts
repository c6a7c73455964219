import { pipelineSpecSchema, specHash } from '@sluice/engine';
import { expect } from 'vitest';
import { pipelineDeployments, pipelines, pipelineVersions } from '../../packages/server/src/db/schema/index';
import { startTestApp, type TestApp } from './app';

// The shop of the runs suites without the engine (packages/server/src/modules/runs/runs.api.test.ts
// and runs.lease.api.test.ts): organization `acme`, project `shop` linked to `staging` and to a
// protected `prod`, `orders-sync` deployed in both, `other` in staging, `draft` never deployed.
// Versions and deployments are written to the store as the pipelines API writes them.

/** The run lease of the shop's API host (SLUICE_RUN_LEASE_SECONDS). */
export const RUN_LEASE_SECONDS = 2;

export const shopSpec = pipelineSpecSchema.parse({
  steps: [
    {
      slug: 'orders',
      kind: 'source',
      data_source_ref: 'shop',
      operation: { operation_type: 'http', path: '/orders' },
    },
    {
      slug: 'load',
      kind: 'sink',
      data_source_ref: 'warehouse',
      operation: { operation_type: 'sql', write: { table: 'orders' } },
    },
  ],
  edges: [{ from: 'orders', to: 'load' }],
  inputs: { region: { required: true }, note: { required: false } },
});

export type Shop = Awaited<ReturnType<typeof startShop>>;

export async function startShop() {
  const t: TestApp = await startTestApp({ env: { SLUICE_RUN_LEASE_SECONDS: String(RUN_LEASE_SECONDS) } });
  const owner: string = (await t.bootstrap('acme')).api_key;
  const pe = '/organizations/acme/projects/shop/environments/staging';
  const prodPe = '/organizations/acme/projects/shop/environments/prod';
  /** Store ids: `project`, each environment by slug, each pipeline as `pipeline:<slug>`. */
  const ids: Record<string, string> = {};
  const q = async (text: string, values: unknown[] = []) =>
    (await t.rt.deps.store.executeSql(text, values)).rows;
  const runRow = async (slug: string) => (await q('select * from pipeline_runs where slug = $1', [slug]))[0];
  const execute = (pipeline: string, body?: unknown, base = pe) =>
    t.call('POST', `${base}/pipelines/${pipeline}:execute`, { token: owner, body });
  const getRun = async (slug: string, base = pe) =>
    (await t.call('GET', `${base}/runs/${slug}`, { token: owner })).json();
  async function waitFor<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
    const until = Date.now() + ms;
    for (;;) {
      const v = await read();
      if (ok(v) || Date.now() > until) return v;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const orgId: string = (await q(`select id from organizations where slug = 'acme'`))[0].id;

  /** A pipeline with a deployed version in the given environments (the pipelines API seeds the same rows). */
  async function deployed(slug: string, envSlugs: string[]) {
    const db = t.rt.deps.db;
    const [p] = await db
      .insert(pipelines)
      .values({ organizationId: orgId, projectId: ids.project, slug, name: slug })
      .returning();
    const hash = specHash(shopSpec);
    await db
      .insert(pipelineVersions)
      .values({ organizationId: orgId, pipelineId: p.id, specHash: hash, spec: shopSpec });
    for (const env of envSlugs) {
      await db.insert(pipelineDeployments).values({
        organizationId: orgId,
        pipelineId: p.id,
        environmentId: ids[env],
        slug: `dep-${slug}-${env}`,
        specHash: hash,
      });
    }
    ids[`pipeline:${slug}`] = p.id;
    return { id: p.id, hash };
  }

  const post = async (url: string, body: unknown) => {
    const res = await t.call('POST', url, { token: owner, body });
    expect(res.statusCode, res.body).toBe(201);
  };
  await post('/organizations/acme/projects', { name: 'Shop', slug: 'shop' });
  await post('/organizations/acme/environments', { name: 'Staging', slug: 'staging' });
  await post('/organizations/acme/environments', { name: 'Prod', slug: 'prod', protected: true });
  for (const env of ['staging', 'prod']) {
    const res = await t.call('PUT', `/organizations/acme/projects/shop/environments/${env}`, {
      token: owner,
      body: { protected_environment_confirmation: env },
    });
    expect(res.statusCode, res.body).toBe(201);
  }
  ids.project = (await q(`select id from projects where slug = 'shop'`))[0].id;
  for (const env of ['staging', 'prod']) {
    ids[env] = (await q('select id from environments where slug = $1', [env]))[0].id;
  }
  await deployed('orders-sync', ['staging', 'prod']);
  await deployed('other', ['staging']);
  // Exists, never deployed.
  await t.rt.deps.db
    .insert(pipelines)
    .values({ organizationId: orgId, projectId: ids.project, slug: 'draft', name: 'draft' });
  return { t, owner, orgId, ids, pe, prodPe, q, runRow, execute, getRun, waitFor };
}
