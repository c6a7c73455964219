import type { ForgeClient, ForgeKind } from '../gitforge/kind';
import { type ForgeAuth, forgeFetch } from '../gitforge/transport';
import type { ConnectorContext } from '../types';
import { githubObjects } from './config';

// GitHub through @octokit/rest (loaded on first use). `base_url` points it at GitHub Enterprise
// Server; the token and the egress guard come in through the fetch it is given.

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

type Row = Record<string, any>;
const login = (u: unknown) => ((u as Row | null)?.login as string | undefined) ?? null;

const issueRow = (i: Row) => [
  i.number,
  i.title ?? null,
  i.state ?? null,
  login(i.user),
  Array.isArray(i.labels)
    ? i.labels.map((l: Row | string) => (typeof l === 'string' ? l : l.name)).join(',')
    : null,
  typeof i.comments === 'number' ? i.comments : null,
  i.created_at ?? null,
  i.updated_at ?? null,
  i.closed_at ?? null,
  i.html_url ?? null,
];

const pullRow = (p: Row) => [
  p.number,
  p.title ?? null,
  p.merged_at ? 'merged' : (p.state ?? null),
  login(p.user),
  p.draft === true,
  p.head?.ref ?? null,
  p.base?.ref ?? null,
  p.created_at ?? null,
  p.updated_at ?? null,
  p.closed_at ?? null,
  p.merged_at ?? null,
  p.html_url ?? null,
];

/** The SDK `githubClient` loads on its first call (a worker's warm start loads it ahead). */
export const githubModule = () => import('@octokit/rest');

export async function githubClient(
  config: Record<string, unknown>,
  auth: ForgeAuth,
  ctx: ConnectorContext,
): Promise<ForgeClient> {
  const { Octokit } = await githubModule();
  const octokit = new Octokit({
    baseUrl: String(config.base_url ?? 'https://api.github.com').replace(/\/+$/, ''),
    userAgent: 'sluice',
    log: quiet,
    request: { fetch: forgeFetch(ctx, auth) },
  });
  const owner = String(config.owner);
  const repo = String(config.repo);

  return {
    async repository() {
      const r = await octokit.rest.repos.get({ owner, repo });
      return { defaultBranch: r.data.default_branch };
    },
    async branches() {
      const names: string[] = [];
      for await (const page of octokit.paginate.iterator(octokit.rest.repos.listBranches, {
        owner,
        repo,
        per_page: 100,
      })) {
        names.push(...page.data.map((b) => b.name));
      }
      return names;
    },
    async files(ref) {
      const r = await octokit.rest.git.getTree({ owner, repo, tree_sha: ref, recursive: 'true' });
      return r.data.tree
        .filter((t) => t.type === 'blob' && t.path)
        .map((t) => ({ path: t.path!, size: t.size ?? null }));
    },
    async readFile(path, ref) {
      // The raw media type streams the bytes (up to 100 MB) instead of base64 inside JSON.
      const r = await octokit.rest.repos.getContent({
        owner,
        repo,
        path,
        ref,
        mediaType: { format: 'raw' },
        request: { parseSuccessResponseBody: false },
      });
      const size = Number(r.headers['content-length']);
      return {
        body: r.data as unknown as AsyncIterable<Uint8Array>,
        size: Number.isFinite(size) ? size : null,
      };
    },
    async commitFile({ path, branch, content, message }) {
      // Updating needs the blob sha of the current file; creating must not send one.
      let sha: string | undefined;
      try {
        const r = await octokit.rest.repos.getContent({ owner, repo, path, ref: branch });
        if (!Array.isArray(r.data) && r.data.type === 'file') sha = r.data.sha;
      } catch (err) {
        if ((err as { status?: number }).status !== 404) throw err;
      }
      const r = await octokit.rest.repos.createOrUpdateFileContents({
        owner,
        repo,
        path,
        branch,
        message,
        content: content.toString('base64'),
        ...(sha ? { sha } : {}),
      });
      return { commit: r.data.commit.sha ?? null };
    },
    async repositoryId() {
      const r = await octokit.rest.repos.get({ owner, repo });
      return String(r.data.id);
    },
    async commit(ref) {
      const r = await octokit.rest.repos.getCommit({ owner, repo, ref });
      return { sha: r.data.sha, treeSha: r.data.commit.tree.sha ?? null };
    },
    async publishCheck(check) {
      // An OAuth token cannot create check runs (GitHub Apps only): a commit status, whose
      // context is the check name, so posting again replaces the earlier one.
      await octokit.rest.repos.createCommitStatus({
        owner,
        repo,
        sha: check.commit_sha,
        state: check.conclusion === 'failure' ? 'failure' : 'success',
        context: check.name,
        target_url: check.details_url,
        description: `${check.title}${check.conclusion === 'neutral' ? ' (warnings)' : ''}`.slice(0, 140),
      });
    },
    async *objects(kind, state) {
      if (kind === 'issues') {
        for await (const page of octokit.paginate.iterator(octokit.rest.issues.listForRepo, {
          owner,
          repo,
          state,
          per_page: 100,
        })) {
          // The issues endpoint lists pull requests too; they have their own collection.
          yield (page.data as Row[]).filter((i) => !i.pull_request).map(issueRow);
        }
        return;
      }
      for await (const page of octokit.paginate.iterator(octokit.rest.pulls.list, {
        owner,
        repo,
        state,
        per_page: 100,
      })) {
        yield (page.data as Row[]).map(pullRow);
      }
    },
  };
}

/** GitHub as a hosted forge kind (gitforge/): its collections, read and written through this client. */
export const githubForge: ForgeKind = {
  type: 'github',
  label: 'GitHub',
  objects: githubObjects,
  client: githubClient,
};
