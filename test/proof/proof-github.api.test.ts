import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEnvelope } from '../../packages/server/src/modules/proof/dsse';
import { type GithubFake, type GithubRepo, startGithubFake } from '../peers/github-api';
import { type Call, createDataSource, ORG, ok } from '../pipelines/support';
import { startTestApp, type TestApp } from '../support/app';
import { connectOAuth } from '../support/oauth';

// Proof for a GitHub data source against the fake GitHub (documented REST contract, driven by
// Octokit): the repository id from the API, files read at a commit, and the receipt posted as
// one commit status per commit and data source.

const DS = `${ORG}/data-sources/gh-ref`;
const COUNTRIES = 'code,name\nDE,Germany\n';

describe('proof for a GitHub data source', () => {
  let t: TestApp;
  let fake: GithubFake;
  let repo: GithubRepo;
  let token: string;
  const call: Call = (method, url, body) => t.call(method, url, { token, body });

  async function observe(body: Record<string, unknown>) {
    const started = await ok(call('POST', `${DS}/proof-observations`, body), 202);
    for (let i = 0; i < 600; i++) {
      const o = await ok(call('GET', `${DS}/proof-observations/${started.slug}`), 200);
      if (o.state !== 'running') return o;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the observation did not finish');
  }

  beforeAll(async () => {
    fake = await startGithubFake();
    repo = fake.addRepo('acme/ref', { files: { 'ref/countries.csv': COUNTRIES, 'README.md': '# ref\n' } });
    t = await startTestApp({
      worker: true,
      env: {
        SLUICE_GITHUB_OAUTH_CLIENT_ID: fake.clientId,
        SLUICE_GITHUB_OAUTH_CLIENT_SECRET: fake.clientSecret,
        SLUICE_GITHUB_OAUTH_URL: fake.url,
        SLUICE_GITHUB_API_URL: fake.url,
      },
    });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, {
      type: 'github',
      name: 'gh-ref',
      slug: 'gh-ref',
      config: { owner: 'acme', repo: 'ref', base_url: fake.url, allow_private_hosts: true },
    });
    await connectOAuth(t, token, 'acme', 'gh-ref');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('posts a success status for a passing commit and a failure status for a breaking one', async () => {
    const settings = {
      enabled: true,
      publish_checks: true,
      expected_repository_id: String(repo.id),
      targets: [{ kind: 'path', ref: 'ref/countries.csv' }],
    };
    const wrong = await call('PUT', `${DS}/proof-settings`, { ...settings, expected_repository_id: '1' });
    expect(wrong.statusCode).toBe(409);
    expect(wrong.json().error.code).toBe('REPOSITORY_MISMATCH');
    await ok(call('PUT', `${DS}/proof-settings`, settings), 201);

    const good = await observe({ ref: 'main' });
    expect(good).toMatchObject({
      state: 'passed',
      repository_id: String(repo.id),
      commit_sha: repo.heads.get('main'),
    });
    expect(good.inputs).toEqual([
      expect.objectContaining({ path: 'ref/countries.csv', fields: expect.any(Array) }),
    ]);
    const passed = await ok(
      call('POST', `${DS}/proof-receipts:compile`, {
        candidate_slug: good.candidate_slug,
        observation_slugs: [good.slug],
      }),
      201,
    );
    expect(passed).toMatchObject({
      verdict: 'PASSED',
      check: { name: 'sluice/proof/gh-ref', conclusion: 'success', published: true, error: null },
    });
    expect(repo.statuses).toEqual([
      expect.objectContaining({ sha: good.commit_sha, state: 'success', context: 'sluice/proof/gh-ref' }),
    ]);
    expect(repo.statuses[0].target_url).toContain(`/proof-receipts/${passed.slug}`);

    const broken = fake.commit('acme/ref', 'main', { 'ref/countries.csv': null });
    const bad = await observe({ commit_sha: broken });
    expect(bad.state).toBe('failed');
    expect(bad.targets[0].findings[0]).toMatchObject({ code: 'FILE_MISSING' });
    const failed = await ok(
      call('POST', `${DS}/proof-receipts:compile`, {
        candidate_slug: bad.candidate_slug,
        observation_slugs: [good.slug, bad.slug],
      }),
      201,
    );
    expect(failed).toMatchObject({ verdict: 'FAILED', prev_receipt_digest: passed.digest });
    expect(failed.check).toMatchObject({ conclusion: 'failure', published: true });
    expect(repo.statuses.at(-1)).toMatchObject({
      sha: broken,
      state: 'failure',
      context: 'sluice/proof/gh-ref',
    });
    // The old commit keeps its own status: one context per commit and data source.
    expect(repo.statuses.filter((s) => s.sha === good.commit_sha)).toHaveLength(1);

    const keys = (await t.call('GET', '/proof-keys')).json().keys;
    const v = verifyEnvelope(failed.envelope, keys);
    expect(v.ok && v.statement.subject[0]).toEqual({ name: `git+${repo.id}`, digest: { gitCommit: broken } });
    for (const secret of fake.issued)
      expect(JSON.stringify([passed, failed]) + t.logs()).not.toContain(secret);
  });
});
