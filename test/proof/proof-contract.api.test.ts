import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEnvelope } from '../../packages/server/src/modules/proof/dsse';
import { type GitHttpsPeer, startGitHttpsPeer } from '../peers/git-https';
import { commitFiles } from '../peers/git-repos';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  pgDataSource,
} from '../pipelines/support';
import { startTestApp, type TestApp } from '../support/app';
import { createSinkDatabase } from '../support/runs';
import { observeUntilDone } from './support';

// Issue 13 acceptance: a commit of the real git peer that drops a column a contracted sink
// promises gives a FAILED receipt naming the step and the column; the fixing commit PASSED.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_proofc_${id}`;
const TOKEN = `glpat-ProofContract${randomBytes(8).toString('hex')}`;
const DS = `${ORG}/data-sources/refdata`;
const ORDERS = 'id,name,country\n1,ada,DE\n2,bob,FR\n';

describe('proof against a data contract', () => {
  let t: TestApp;
  let https: GitHttpsPeer;
  let token: string;
  let repo: string;
  let sink: { drop(): Promise<unknown> };
  const savedCa = process.env.GIT_SSL_CAINFO;
  const call: Call = (method, url, body) => t.call(method, url, { token, body });

  const observe = (commit: string) => observeUntilDone(call, DS, { commit_sha: commit });
  const compile = (o: any) =>
    ok(
      call('POST', `${DS}/proof-receipts:compile`, {
        candidate_slug: o.candidate_slug,
        observation_slugs: [o.slug],
      }),
      201,
    );

  beforeAll(async () => {
    https = await startGitHttpsPeer({ token: TOKEN });
    process.env.GIT_SSL_CAINFO = https.caFile;
    repo = https.createRepo('refdata');
    commitFiles(repo, 'main', { 'data/orders.csv': ORDERS });
    sink = await createSinkDatabase(PG_DB);
    t = await startTestApp({ worker: true, env: { SLUICE_RATE_LIMIT_PER_TOKEN: '100000' } });
    token = (await t.bootstrap('acme')).api_key;
    await createProjectAndEnvironment(call);
    await createDataSource(call, {
      type: 'git',
      name: 'refdata',
      slug: 'refdata',
      config: { repo_url: `${https.url}refdata.git`, allow_private_hosts: true },
      credentials: { auth_type: 'https', username: 'sluice', token: TOKEN },
    });
    await createDataSource(call, pgDataSource('warehouse', PG_DB));
    await ok(call('POST', `${DS}/schema-import`), 202);
    for (let i = 0; i < 300; i++) {
      if ((await ok(call('GET', DS), 200)).schema_status === 'ready') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await deployPipeline(call, {
      pipeline: 'load-orders',
      spec: {
        steps: [
          {
            slug: 'orders-file',
            kind: 'source',
            data_source_ref: 'repo',
            operation: { operation_type: 'git', path: 'data/orders.csv' },
          },
          {
            slug: 'shape',
            kind: 'transform',
            operation: { operation_type: 'sql', sql: 'select id, name, country from "orders-file"' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: {
              operation_type: 'sql',
              write: { table: 'orders_out', mode: 'insert', create_table: true },
            },
          },
        ],
        edges: [
          { from: 'orders-file', to: 'shape' },
          { from: 'shape', to: 'load' },
        ],
      },
      bindings: { repo: 'refdata', warehouse: 'warehouse' },
    });
    const contracts = `${ORG}/projects/shop/contracts`;
    await ok(
      call('POST', contracts, {
        name: 'Orders out',
        slug: 'orders-out',
        target: { pipeline_slug: 'load-orders', step_slug: 'load' },
      }),
      201,
    );
    await ok(
      call('POST', `${contracts}/orders-out/revisions`, {
        columns: [
          { name: 'id', type: 'bigint', nullable: false },
          { name: 'name', type: 'varchar', nullable: true },
          { name: 'country', type: 'varchar', nullable: true },
        ],
      }),
      201,
    );
    const root = (await ok(call('GET', `${DS}/branches`), 200)).branches;
    expect(root.length).toBeGreaterThan(0);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await https?.close();
    await sink?.drop();
    if (savedCa === undefined) delete process.env.GIT_SSL_CAINFO;
    else process.env.GIT_SSL_CAINFO = savedCa;
  });

  it('fails the commit that drops a contracted column and passes the one that restores it', async () => {
    const unknown = await call('PUT', `${DS}/proof-settings`, {
      enabled: false,
      publish_checks: false,
      expected_repository_id: 'x',
      targets: [{ kind: 'contract', ref: 'no-such-contract' }],
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.validation_errors[0]).toMatchObject({
      path: 'targets.0.ref',
      code: 'not_found',
    });

    const base = commitFiles(repo, 'main', { 'README.md': '# data\n' }, 'readme');
    const rootId = (await import('../peers/git-repos'))
      .git(repo, ['rev-list', '--max-parents=0', base])
      .trim();
    await ok(
      call('PUT', `${DS}/proof-settings`, {
        enabled: true,
        publish_checks: false,
        expected_repository_id: rootId,
        targets: [{ kind: 'contract', ref: 'orders-out' }],
      }),
      201,
    );

    const good = await observe(base);
    expect(good.state, JSON.stringify(good.targets)).toBe('passed');
    expect(good.targets[0]).toMatchObject({ kind: 'contract', result: 'pass', files: ['data/orders.csv'] });
    expect(good.targets[0].contract_revision).toMatchObject({
      slug: expect.any(String),
      digest: expect.any(String),
    });

    const broken = commitFiles(repo, 'main', { 'data/orders.csv': 'id,name\n1,ada\n' }, 'drop country');
    const bad = await observe(broken);
    expect(bad.state).toBe('failed');
    const errors = bad.targets[0].findings.filter((f: any) => f.severity === 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.map((f: any) => f.message).join('\n')).toMatch(/country/);
    expect(errors.map((f: any) => f.message).join('\n')).toMatch(/shape/);
    const failed = await compile(bad);
    expect(failed.verdict).toBe('FAILED');
    const keys = (await t.call('GET', '/proof-keys')).json().keys;
    const v = verifyEnvelope(failed.envelope, keys);
    expect(v.ok && v.statement.predicate.contract_revisions).toEqual([
      { contract: 'orders-out', ...good.targets[0].contract_revision },
    ]);

    const fixed = commitFiles(repo, 'main', { 'data/orders.csv': ORDERS }, 'restore country');
    const again = await observe(fixed);
    expect(again.state).toBe('passed');
    expect((await compile(again)).verdict).toBe('PASSED');
  });
});
