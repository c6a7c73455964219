import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A stateful fake of the GitLab REST API v4 and its OAuth 2 provider (Doorkeeper), following
// GitLab's documented contracts (docs.gitlab.com/api, "OAuth 2.0 identity provider API"):
// PKCE S256, 2-hour access tokens with rotating refresh tokens, /oauth/revoke, offset paging
// with x-next-page (and Link), 401 invalid_token, 403 Forbidden and 429 with Retry-After and
// RateLimit-* headers. Driven through @gitbeaker/rest exactly as production would be.

export type GitlabProject = {
  id: number;
  defaultBranch: string;
  branches: Map<string, Map<string, Buffer>>;
  issues: Record<string, unknown>[];
  mergeRequests: Record<string, unknown>[];
  commits: number;
  /** commit sha -> the files it holds; branch -> head commit sha. */
  commitLog: Map<string, Map<string, Buffer>>;
  heads: Map<string, string>;
  /** Commit statuses posted, in order (POST /projects/:id/statuses/:sha). */
  statuses: {
    sha: string;
    state: string;
    name: string;
    target_url: string | null;
    description: string | null;
  }[];
};

type Token = { username: string; expiresAt: number };

export type GitlabFake = {
  url: string;
  username: string;
  clientId: string;
  clientSecret: string;
  projects: Map<string, GitlabProject>;
  denied: Set<string>;
  tokenTtlSeconds: number;
  issued: string[];
  tokenCalls: { authorization_code: number; refresh_token: number };
  revoked: string[];
  addProject(
    path: string,
    opts?: { defaultBranch?: string; files?: Record<string, string | Buffer>; branches?: string[] },
  ): GitlabProject;
  /** Commits changes to a branch (null deletes a file); answers the new commit sha. */
  commit(path: string, branch: string, changes: Record<string, string | null>): string;
  issueToken(username?: string): { access_token: string; refresh_token: string };
  expireAccessTokens(username?: string): void;
  revokeRefreshTokens(username?: string): void;
  rateLimitNext(count: number, retryAfter?: number): void;
  close(): Promise<void>;
};

const json = (
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
  return true;
};
const rand = (prefix: string) => `${prefix}${randomBytes(18).toString('hex')}`;
const sha = (b: Buffer | string) => createHash('sha1').update(b).digest('hex');

async function readBody(req: http.IncomingMessage) {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  if ((req.headers['content-type'] ?? '').includes('json')) return text ? JSON.parse(text) : {};
  return Object.fromEntries(new URLSearchParams(text));
}

/** Records the branch's current files as a new commit and moves the branch to it. */
function record(path: string, project: GitlabProject, branch: string): string {
  const id = sha(`${path}:${branch}:${project.commitLog.size}:${project.commits}`);
  project.commitLog.set(id, new Map(project.branches.get(branch)));
  project.heads.set(branch, id);
  return id;
}

/** The files of a branch or of a recorded commit. */
const filesAt = (project: GitlabProject, ref: string) =>
  project.commitLog.get(ref) ?? project.branches.get(ref);

export async function startGitlabFake(): Promise<GitlabFake> {
  const tokens = new Map<string, Token>();
  const refreshes = new Map<string, string>();
  const codes = new Map<
    string,
    { username: string; challenge: string; method: string; redirectUri: string; used: boolean }
  >();
  let limited = { count: 0, retryAfter: 60 };
  let nextId = 100;

  const fake: GitlabFake = {
    url: '',
    username: 'gl-user',
    clientId: 'gl-fake-app-id',
    clientSecret: 'gloas-fake-client-secret',
    projects: new Map(),
    denied: new Set(),
    tokenTtlSeconds: 7200,
    issued: [],
    tokenCalls: { authorization_code: 0, refresh_token: 0 },
    revoked: [],
    addProject(path, opts = {}) {
      const defaultBranch = opts.defaultBranch ?? 'main';
      const files = new Map<string, Buffer>();
      for (const [p, v] of Object.entries(opts.files ?? {}))
        files.set(p, Buffer.isBuffer(v) ? v : Buffer.from(v));
      const branches = new Map([[defaultBranch, files]]);
      for (const b of opts.branches ?? []) branches.set(b, new Map(files));
      const project: GitlabProject = {
        id: nextId++,
        defaultBranch,
        branches,
        issues: [],
        mergeRequests: [],
        commits: 0,
        commitLog: new Map(),
        heads: new Map(),
        statuses: [],
      };
      fake.projects.set(path, project);
      for (const b of branches.keys()) record(path, project, b);
      return project;
    },
    commit(path, branch, changes) {
      const project = fake.projects.get(path)!;
      const files = project.branches.get(branch)!;
      for (const [p, v] of Object.entries(changes)) {
        if (v === null) files.delete(p);
        else files.set(p, Buffer.from(v));
      }
      project.commits++;
      return record(path, project, branch);
    },
    issueToken(username = fake.username) {
      const access_token = rand('glat-');
      const refresh_token = rand('glrt-');
      tokens.set(access_token, { username, expiresAt: Date.now() + fake.tokenTtlSeconds * 1000 });
      refreshes.set(refresh_token, username);
      fake.issued.push(access_token, refresh_token);
      return { access_token, refresh_token };
    },
    expireAccessTokens(who) {
      for (const t of tokens.values()) if (!who || t.username === who) t.expiresAt = Date.now() - 1000;
    },
    revokeRefreshTokens(who) {
      for (const [k, u] of refreshes) if (!who || u === who) refreshes.delete(k);
    },
    rateLimitNext(count, retryAfter = 60) {
      limited = { count, retryAfter };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const tokenAnswer = (res: http.ServerResponse, username: string) => {
    const t = fake.issueToken(username);
    return json(res, 200, {
      access_token: t.access_token,
      token_type: 'Bearer',
      expires_in: fake.tokenTtlSeconds,
      refresh_token: t.refresh_token,
      scope: 'api read_user',
      created_at: Math.floor(Date.now() / 1000),
    });
  };

  async function oauth(req: http.IncomingMessage, res: http.ServerResponse, url: URL) {
    if (req.method === 'GET' && url.pathname === '/oauth/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== fake.clientId || q.get('response_type') !== 'code')
        return json(res, 400, { error: 'invalid_request' });
      const code = rand('');
      codes.set(code, {
        username: fake.username,
        challenge: q.get('code_challenge') ?? '',
        method: q.get('code_challenge_method') ?? '',
        redirectUri: q.get('redirect_uri') ?? '',
        used: false,
      });
      const back = new URL(q.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      if (q.has('state')) back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.toString() });
      res.end();
      return true;
    }
    if (req.method === 'POST' && url.pathname === '/oauth/token') {
      const body = await readBody(req);
      if (body.client_id !== fake.clientId || body.client_secret !== fake.clientSecret) {
        return json(res, 401, {
          error: 'invalid_client',
          error_description: 'Client authentication failed.',
        });
      }
      if (body.grant_type === 'refresh_token') {
        fake.tokenCalls.refresh_token++;
        const who = refreshes.get(body.refresh_token ?? '');
        if (!who)
          return json(res, 400, {
            error: 'invalid_grant',
            error_description: 'The provided authorization grant is invalid, expired, revoked.',
          });
        refreshes.delete(body.refresh_token); // GitLab rotates refresh tokens
        return tokenAnswer(res, who);
      }
      fake.tokenCalls.authorization_code++;
      const c = codes.get(body.code ?? '');
      if (!c || c.used || c.redirectUri !== body.redirect_uri) {
        return json(res, 400, {
          error: 'invalid_grant',
          error_description: 'The provided authorization grant is invalid.',
        });
      }
      c.used = true;
      const challenge = createHash('sha256')
        .update(body.code_verifier ?? '')
        .digest('base64url');
      if (c.method !== 'S256' || challenge !== c.challenge) {
        return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed.' });
      }
      return tokenAnswer(res, c.username);
    }
    if (req.method === 'POST' && url.pathname === '/oauth/revoke') {
      const body = await readBody(req);
      if (body.client_id !== fake.clientId || body.client_secret !== fake.clientSecret) {
        return json(res, 403, { error: 'unauthorized_client' });
      }
      if (tokens.delete(body.token ?? '')) fake.revoked.push(body.token);
      return json(res, 200, {});
    }
    return false;
  }

  function page(res: http.ServerResponse, url: URL, items: unknown[]) {
    const per = Math.min(Number(url.searchParams.get('per_page') ?? 20) || 20, 100);
    const n = Math.max(Number(url.searchParams.get('page') ?? 1) || 1, 1);
    const pages = Math.max(Math.ceil(items.length / per), 1);
    const headers: Record<string, string> = {
      'x-page': String(n),
      'x-per-page': String(per),
      'x-total': String(items.length),
      'x-total-pages': String(pages),
      'x-next-page': n < pages ? String(n + 1) : '',
      'x-prev-page': n > 1 ? String(n - 1) : '',
    };
    if (n < pages) {
      const u = new URL(url.pathname + url.search, fake.url);
      u.searchParams.set('page', String(n + 1));
      headers.link = `<${u}>; rel="next"`;
    }
    return json(res, 200, items.slice((n - 1) * per, n * per), headers);
  }

  async function api(req: http.IncomingMessage, res: http.ServerResponse, url: URL) {
    if (!url.pathname.startsWith('/api/v4/')) return json(res, 404, { message: '404 Not Found' });
    const m = (req.headers.authorization ?? '').match(/^Bearer (.+)$/i);
    const t = m ? tokens.get(m[1]) : undefined;
    if (!t) return json(res, 401, { message: '401 Unauthorized' });
    if (t.expiresAt < Date.now())
      return json(res, 401, {
        error: 'invalid_token',
        error_description: 'Token is expired. You can either do re-authorization or token refresh.',
      });
    if (limited.count > 0) {
      limited.count--;
      return json(
        res,
        429,
        { message: 'Retry later' },
        {
          'retry-after': String(limited.retryAfter),
          'ratelimit-limit': '600',
          'ratelimit-remaining': '0',
          'ratelimit-reset': String(Math.floor(Date.now() / 1000) + limited.retryAfter),
        },
      );
    }
    const path = url.pathname.slice('/api/v4'.length);
    if (req.method === 'GET' && path === '/user') return json(res, 200, { id: 7, username: t.username });
    const pm = path.match(/^\/projects\/([^/]+)(\/.*)?$/);
    if (!pm) return json(res, 404, { message: '404 Not Found' });
    const key = decodeURIComponent(pm[1]);
    const project = fake.projects.get(key) ?? [...fake.projects.values()].find((p) => String(p.id) === key);
    if (!project) return json(res, 404, { message: '404 Project Not Found' });
    if (fake.denied.has(t.username)) return json(res, 403, { message: '403 Forbidden' });
    const rest = pm[2] ?? '';
    const ref = url.searchParams.get('ref') ?? project.defaultBranch;

    if (req.method === 'GET' && rest === '') {
      return json(res, 200, {
        id: project.id,
        path_with_namespace: key,
        default_branch: project.defaultBranch,
      });
    }
    if (req.method === 'GET' && rest === '/repository/branches') {
      const names = [...project.branches.keys()].sort();
      return page(
        res,
        url,
        names.map((name) => ({ name, default: name === project.defaultBranch, commit: { id: sha(name) } })),
      );
    }
    // GET /projects/:id/repository/commits/:sha — a commit by sha, or a branch's head.
    const cm = rest.match(/^\/repository\/commits\/([^/]+)$/);
    if (req.method === 'GET' && cm) {
      const asked = decodeURIComponent(cm[1]);
      const id = project.commitLog.has(asked) ? asked : project.heads.get(asked);
      if (!id) return json(res, 404, { message: '404 Commit Not Found' });
      return json(res, 200, { id, short_id: id.slice(0, 8), parent_ids: [], title: 'commit' });
    }
    // POST /projects/:id/statuses/:sha — state, name, target_url, description.
    const st = rest.match(/^\/statuses\/([0-9a-f]{40})$/);
    if (req.method === 'POST' && st) {
      const body = await readBody(req);
      if (!project.commitLog.has(st[1])) return json(res, 404, { message: '404 Commit Not Found' });
      if (!['pending', 'running', 'success', 'failed', 'canceled'].includes(body.state))
        return json(res, 400, { message: 'state does not have a valid value' });
      const posted = {
        sha: st[1],
        state: body.state,
        name: body.name ?? body.context ?? 'default',
        target_url: body.target_url ?? null,
        description: body.description ?? null,
      };
      project.statuses.push(posted);
      return json(res, 201, { id: project.statuses.length, ...posted });
    }
    if (req.method === 'GET' && rest === '/repository/tree') {
      const files = filesAt(project, ref);
      if (!files) return json(res, 404, { message: '404 Tree Not Found' });
      return page(
        res,
        url,
        [...files.keys()]
          .sort()
          .map((p) => ({ id: sha(p), name: p.split('/').pop(), type: 'blob', path: p, mode: '100644' })),
      );
    }
    const fm = rest.match(/^\/repository\/files\/([^/]+)(\/raw)?$/);
    if (fm) {
      const filePath = decodeURIComponent(fm[1]);
      if (req.method === 'GET') {
        const b = filesAt(project, ref)?.get(filePath);
        if (!b) return json(res, 404, { message: '404 File Not Found' });
        if (fm[2]) {
          res.writeHead(200, {
            'content-type': 'text/plain; charset=utf-8',
            'content-length': String(b.length),
          });
          res.end(b);
          return true;
        }
        return json(res, 200, {
          file_name: filePath.split('/').pop(),
          file_path: filePath,
          size: b.length,
          encoding: 'base64',
          content: b.toString('base64'),
          ref,
          blob_id: sha(b),
        });
      }
      if (req.method === 'POST' || req.method === 'PUT') {
        const body = await readBody(req);
        const files = project.branches.get(body.branch);
        if (!files)
          return json(res, 400, { message: 'You can only create or edit files when you are on a branch' });
        const exists = files.has(filePath);
        if (req.method === 'POST' && exists)
          return json(res, 400, { message: 'A file with this name already exists' });
        if (req.method === 'PUT' && !exists)
          return json(res, 400, { message: "A file with this name doesn't exist" });
        if (typeof body.commit_message !== 'string' || typeof body.content !== 'string')
          return json(res, 400, { message: 'commit_message is missing' });
        files.set(
          filePath,
          body.encoding === 'base64' ? Buffer.from(body.content, 'base64') : Buffer.from(body.content),
        );
        project.commits++;
        record(key, project, body.branch);
        return json(res, req.method === 'POST' ? 201 : 200, { file_path: filePath, branch: body.branch });
      }
    }
    if (req.method === 'GET' && (rest === '/issues' || rest === '/merge_requests')) {
      const state = url.searchParams.get('state') ?? 'all';
      const all = rest === '/issues' ? project.issues : project.mergeRequests;
      return page(
        res,
        url,
        all.filter((i) => state === 'all' || i.state === state),
      );
    }
    return json(res, 404, { message: '404 Not Found' });
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    oauth(req, res, url)
      .then((done) => (done ? undefined : api(req, res, url)))
      .catch(() => {
        if (!res.headersSent) json(res, 500, { message: '500 Internal Server Error' });
        else res.destroy();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

export function gitlabIssue(n: number, o: { state?: string } = {}) {
  return {
    id: 5000 + n,
    iid: n,
    title: `Issue ${n}`,
    state: o.state ?? 'opened',
    author: { username: 'gl-user' },
    labels: n % 2 ? ['bug'] : ['feature', 'ui'],
    user_notes_count: n % 4,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
    updated_at: new Date(Date.UTC(2026, 0, 2, 0, n)).toISOString(),
    closed_at: null,
    web_url: `https://gitlab.example/acme/data/-/issues/${n}`,
  };
}

export function gitlabMergeRequest(n: number, o: { state?: string } = {}) {
  return {
    id: 6000 + n,
    iid: n,
    title: `MR ${n}`,
    state: o.state ?? 'opened',
    author: { username: 'gl-user' },
    draft: n % 3 === 0,
    source_branch: `feature-${n}`,
    target_branch: 'main',
    created_at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
    updated_at: new Date(Date.UTC(2026, 0, 2, 0, n)).toISOString(),
    closed_at: null,
    merged_at: o.state === 'merged' ? new Date(Date.UTC(2026, 0, 3)).toISOString() : null,
    web_url: `https://gitlab.example/acme/data/-/merge_requests/${n}`,
  };
}
