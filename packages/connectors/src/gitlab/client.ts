import type { ForgeClient, ForgeKind } from '../gitforge/kind';
import { type ForgeAuth, forgeFetch } from '../gitforge/transport';
import type { ConnectorContext } from '../types';
import { gitlabObjects } from './config';

// GitLab through @gitbeaker/rest (loaded on first use), for gitlab.com or a self-managed host.
// Gitbeaker's own requester calls the global fetch and retries 429s for minutes; ours sends
// every request through the shared transport (egress guard, token, one refresh, short waits).

type Row = Record<string, any>;

const issueRow = (i: Row) => [
  i.iid,
  i.title ?? null,
  i.state === 'opened' ? 'open' : (i.state ?? null),
  i.author?.username ?? null,
  Array.isArray(i.labels)
    ? i.labels.map((l: Row | string) => (typeof l === 'string' ? l : l.name)).join(',')
    : null,
  typeof i.user_notes_count === 'number' ? i.user_notes_count : null,
  i.created_at ?? null,
  i.updated_at ?? null,
  i.closed_at ?? null,
  i.web_url ?? null,
];

const mergeRequestRow = (m: Row) => [
  m.iid,
  m.title ?? null,
  m.state === 'opened' ? 'open' : (m.state ?? null),
  m.author?.username ?? null,
  m.draft === true || m.work_in_progress === true,
  m.source_branch ?? null,
  m.target_branch ?? null,
  m.created_at ?? null,
  m.updated_at ?? null,
  m.closed_at ?? null,
  m.merged_at ?? null,
  m.web_url ?? null,
];

const gitlabState = (s: 'open' | 'closed' | 'all') => (s === 'open' ? 'opened' : s);

/** The SDK `gitlabClient` loads on its first call (a worker's warm start loads it ahead). */
export const gitlabModules = () =>
  Promise.all([import('@gitbeaker/rest'), import('@gitbeaker/requester-utils')]);

export async function gitlabClient(
  config: Record<string, unknown>,
  auth: ForgeAuth,
  ctx: ConnectorContext,
): Promise<ForgeClient> {
  const [{ Gitlab, GitbeakerRequestError }, { createRequesterFn }] = await gitlabModules();
  const send = forgeFetch(ctx, auth);
  const requesterFn = createRequesterFn(
    async (_service: unknown, options: Record<string, any>) => options,
    async (endpoint: string, given?: Record<string, unknown>) => {
      const options = (given ?? {}) as Record<string, any>;
      const prefix = String(options.prefixUrl ?? '');
      const url = new URL(endpoint, prefix.endsWith('/') ? prefix : `${prefix}/`);
      if (options.searchParams) url.search = options.searchParams;
      const res = await send(url.toString(), {
        method: options.method,
        headers: options.headers,
        body: options.body,
        signal: options.signal,
      });
      if (!res.ok) {
        await res.body?.cancel();
        // Status and headers only: the provider's words never reach our messages.
        throw new GitbeakerRequestError(`HTTP ${res.status}`, {
          cause: { description: '', request: new Request(url), response: res },
        });
      }
      const headers = Object.fromEntries(res.headers.entries());
      if (options.asStream) return { body: res.body as never, headers, status: res.status };
      const type = (res.headers.get('content-type') ?? '').split(';')[0].trim();
      const body = (
        res.status === 204 ? null : type === 'application/json' ? await res.json() : await res.text()
      ) as never;
      return { body, headers, status: res.status };
    },
  ) as never;
  const api = new Gitlab({
    host: String(config.base_url ?? 'https://gitlab.com').replace(/\/+$/, ''),
    // The real token is set by the transport; Gitbeaker insists on one to build its headers.
    oauthToken: 'set-by-transport',
    requesterFn: requesterFn as never,
  }) as any;
  const project = String(config.project);

  async function* pages(
    fetchPage: (page: number) => Promise<{ data: Row[]; paginationInfo: { next: number | null } }>,
  ) {
    let page: number | null = 1;
    while (page) {
      const r = await fetchPage(page);
      yield r.data;
      page = r.paginationInfo.next;
    }
  }

  return {
    async repository() {
      const p = await api.Projects.show(project);
      return { defaultBranch: p.default_branch };
    },
    async branches() {
      const names: string[] = [];
      for await (const data of pages((page) =>
        api.Branches.all(project, { perPage: 100, page, showExpanded: true }),
      )) {
        names.push(...data.map((b) => b.name));
      }
      return names;
    },
    async files(ref) {
      const out: { path: string; size: number | null }[] = [];
      for await (const data of pages((page) =>
        api.Repositories.allRepositoryTrees(project, {
          ref,
          recursive: true,
          perPage: 100,
          page,
          showExpanded: true,
        }),
      )) {
        for (const f of data) if (f.type === 'blob') out.push({ path: f.path, size: null });
      }
      return out;
    },
    async readFile(path, ref) {
      const body = await api.RepositoryFiles.showRaw(project, path, ref, { asStream: true });
      return { body: body as AsyncIterable<Uint8Array>, size: null };
    },
    async commitFile({ path, branch, content, message }) {
      let exists = true;
      try {
        await api.RepositoryFiles.show(project, path, branch);
      } catch (err) {
        if ((err as { cause?: { response?: { status?: number } } }).cause?.response?.status !== 404)
          throw err;
        exists = false;
      }
      const write = exists ? api.RepositoryFiles.edit : api.RepositoryFiles.create;
      await write.call(api.RepositoryFiles, project, path, branch, content.toString('base64'), message, {
        encoding: 'base64',
      });
      return { commit: null };
    },
    async repositoryId() {
      const p = await api.Projects.show(project);
      return String(p.id);
    },
    async commit(ref) {
      // GitLab's commit API names no tree; the receipt's subject is the commit itself.
      const c = await api.Commits.show(project, ref);
      return { sha: c.id, treeSha: null };
    },
    async publishCheck(check) {
      // The status name is the check name: GitLab keeps one status per name and commit.
      await api.Commits.editStatus(
        project,
        check.commit_sha,
        check.conclusion === 'failure' ? 'failed' : 'success',
        {
          name: check.name,
          targetUrl: check.details_url,
          description: `${check.title}${check.conclusion === 'neutral' ? ' (warnings)' : ''}`.slice(0, 255),
        },
      );
    },
    async *objects(kind, state) {
      const resource = kind === 'issues' ? api.Issues : api.MergeRequests;
      const toRow = kind === 'issues' ? issueRow : mergeRequestRow;
      for await (const data of pages((page) =>
        resource.all({
          projectId: project,
          state: gitlabState(state),
          perPage: 100,
          page,
          showExpanded: true,
        }),
      )) {
        yield data.map(toRow);
      }
    },
  };
}

/** GitLab as a hosted forge kind (gitforge/): its collections, read and written through this client. */
export const gitlabForge: ForgeKind = {
  type: 'gitlab',
  label: 'GitLab',
  objects: gitlabObjects,
  client: gitlabClient,
};
