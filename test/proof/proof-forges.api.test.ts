import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEnvelope } from '../../packages/server/src/modules/proof/dsse';
import { startGithubFake } from '../peers/github-api';
import { startGitlabFake } from '../peers/gitlab-api';
import { type Call, createDataSource, ORG, ok } from '../pipelines/support';
import { startTestApp, type TestApp } from '../support/app';
import { connectOAuth } from '../support/oauth';
import { observeUntilDone } from './support';

// Proof for GitHub and GitLab data sources against their fakes (documented REST contracts,
// driven by Octokit and Gitbeaker): the repository id from the API, files read at a commit, and
// the receipt posted as one commit status per commit and data source.

const DS = `${ORG}/data-sources/gh-ref`;
const COUNTRIES = 'code,name\nDE,Germany\n';
const files = { 'ref/countries.csv': COUNTRIES, 'README.md': '# ref\n' };

type Forge = {
  env: Record<string, string>;
  config: Record<string, unknown>;
  repositoryId: string;
  head(): string;
  commit(changes: Record<string, string | null>): string;
  statuses(): { sha: string; state: string; target_url: string | null; check: string }[];
  issued: string[];
  close(): Promise<void>;
};

const forges: { type: 'github' | 'gitlab'; success: string; failure: string; start(): Promise<Forge> }[] = [
  {
    type: 'github',
    success: 'success',
    failure: 'failure',
    async start() {
      const fake = await startGithubFake();
      const repo = fake.addRepo('acme/ref', { files });
      return {
        env: {
          SLUICE_GITHUB_OAUTH_CLIENT_ID: fake.clientId,
          SLUICE_GITHUB_OAUTH_CLIENT_SECRET: fake.clientSecret,
          SLUICE_GITHUB_OAUTH_URL: fake.url,
          SLUICE_GITHUB_API_URL: fake.url,
        },
        config: { owner: 'acme', repo: 'ref', base_url: fake.url, allow_private_hosts: true },
        repositoryId: String(repo.id),
        head: () => repo.heads.get('main')!,
        commit: (changes) => fake.commit('acme/ref', 'main', changes),
        statuses: () => repo.statuses.map((s) => ({ ...s, check: s.context })),
        issued: fake.issued,
        close: () => fake.close(),
      };
    },
  },
  {
    type: 'gitlab',
    success: 'success',
    failure: 'failed',
    async start() {
      const fake = await startGitlabFake();
      const project = fake.addProject('acme/ref', { files });
      return {
        env: {
          SLUICE_GITLAB_OAUTH_CLIENT_ID: fake.clientId,
          SLUICE_GITLAB_OAUTH_CLIENT_SECRET: fake.clientSecret,
          SLUICE_GITLAB_URL: fake.url,
        },
        config: { project: 'acme/ref', base_url: fake.url, allow_private_hosts: true },
        repositoryId: String(project.id),
        head: () => project.heads.get('main')!,
        commit: (changes) => fake.commit('acme/ref', 'main', changes),
        statuses: () => project.statuses.map((s) => ({ ...s, check: s.name })),
        issued: fake.issued,
        close: () => fake.close(),
      };
    },
  },
];

describe.each(forges)('proof for a $type data source', (forge) => {
  let t: TestApp;
  let fake: Forge;
  let token: string;
  const call: Call = (method, url, body) => t.call(method, url, { token, body });

  const observe = (body: Record<string, unknown>) => observeUntilDone(call, DS, body);

  beforeAll(async () => {
    fake = await forge.start();
    t = await startTestApp({ worker: true, env: fake.env });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, {
      type: forge.type,
      name: 'gh-ref',
      slug: 'gh-ref',
      config: fake.config,
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
      expected_repository_id: fake.repositoryId,
      targets: [{ kind: 'path', ref: 'ref/countries.csv' }],
    };
    const wrong = await call('PUT', `${DS}/proof-settings`, { ...settings, expected_repository_id: '1' });
    expect(wrong.statusCode).toBe(409);
    expect(wrong.json().error.code).toBe('REPOSITORY_MISMATCH');
    await ok(call('PUT', `${DS}/proof-settings`, settings), 201);

    const good = await observe({ ref: 'main' });
    expect(good).toMatchObject({
      state: 'passed',
      repository_id: fake.repositoryId,
      commit_sha: fake.head(),
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
    expect(fake.statuses()).toEqual([
      expect.objectContaining({ sha: good.commit_sha, state: forge.success, check: 'sluice/proof/gh-ref' }),
    ]);
    // The status links to the receipt page of the app, under SLUICE_PUBLIC_URL.
    expect(fake.statuses()[0].target_url).toBe(
      `${t.rt.deps.config.publicUrl}/o/acme/data-sources/gh-ref/proof-receipts/${passed.slug}`,
    );

    const broken = fake.commit({ 'ref/countries.csv': null });
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
    expect(fake.statuses().at(-1)).toMatchObject({
      sha: broken,
      state: forge.failure,
      check: 'sluice/proof/gh-ref',
    });
    // The old commit keeps its own status: one name per commit and data source.
    expect(fake.statuses().filter((s) => s.sha === good.commit_sha)).toHaveLength(1);

    const keys = (await t.call('GET', '/proof-keys')).json().keys;
    const v = verifyEnvelope(failed.envelope, keys);
    expect(v.ok && v.statement.subject[0]).toEqual({
      name: `git+${fake.repositoryId}`,
      digest: { gitCommit: broken },
    });
    for (const secret of fake.issued)
      expect(JSON.stringify([passed, failed]) + t.logs()).not.toContain(secret);
  });
});
