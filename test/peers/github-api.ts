import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A stateful fake of the GitHub REST API and its OAuth web flow, following GitHub's documented
// contracts (docs.github.com/rest, "Authorizing OAuth apps"): PKCE S256 on the code exchange,
// expiring user tokens with refresh tokens, token revocation, `Link` paging, 401 "Bad
// credentials", 403 "Resource not accessible", and rate limits (403 with x-ratelimit-remaining: 0,
// or 429 with retry-after). Driven through @octokit/rest exactly as production would be.

export type GithubRepo = {
  defaultBranch: string;
  /** branch -> path -> bytes */
  branches: Map<string, Map<string, Buffer>>;
  issues: Record<string, unknown>[];
  pulls: Record<string, unknown>[];
  commits: number;
  /** The repository's immutable numeric id. */
  id: number;
  /** commit sha -> the files it holds; branch -> head commit sha. */
  commitLog: Map<string, Map<string, Buffer>>;
  heads: Map<string, string>;
  /** Commit statuses posted, in order (POST /repos/{o}/{r}/statuses/{sha}). */
  statuses: {
    sha: string;
    state: string;
    context: string;
    target_url: string | null;
    description: string | null;
  }[];
};

type Token = { login: string; expiresAt: number | null; scope: string };
type Refresh = { login: string; scope: string };
type Code = {
  login: string;
  challenge: string;
  method: string;
  redirectUri: string;
  scope: string;
  used: boolean;
};

export type GithubFake = {
  url: string;
  /** The account that consents on the authorize page. */
  login: string;
  clientId: string;
  clientSecret: string;
  repos: Map<string, GithubRepo>;
  /** Logins whose requests to a repository answer 403 (token lacks permission). */
  denied: Set<string>;
  /** Lifetime of issued access tokens; null issues non-expiring tokens (classic OAuth apps). */
  tokenTtlSeconds: number | null;
  /** Every access and refresh token ever issued, to check none leaks. */
  issued: string[];
  /** Calls of the token endpoint by grant type. */
  tokenCalls: { authorization_code: number; refresh_token: number };
  revoked: string[];
  addRepo(
    fullName: string,
    opts?: { defaultBranch?: string; files?: Record<string, string | Buffer>; branches?: string[] },
  ): GithubRepo;
  /** Commits changes to a branch (null deletes a file); answers the new commit sha. */
  commit(fullName: string, branch: string, changes: Record<string, string | null>): string;
  /** Issues a token directly (as if authorized), for connector tests. */
  issueToken(login?: string, ttlSeconds?: number | null): { access_token: string; refresh_token: string };
  /** Expires the access tokens of one account (all when none is named). */
  expireAccessTokens(login?: string): void;
  revokeRefreshTokens(login?: string): void;
  /** The next `count` API requests answer a rate limit. */
  rateLimitNext(count: number, o?: { status?: 403 | 429; retryAfter?: number }): void;
  close(): Promise<void>;
};

const json = (
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
  return true;
};

const sha = (b: Buffer | string) => createHash('sha1').update(b).digest('hex');
const rand = (prefix: string) => `${prefix}${randomBytes(18).toString('hex')}`;

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function parseBody(req: http.IncomingMessage, raw: Buffer): Record<string, string> {
  const text = raw.toString();
  if ((req.headers['content-type'] ?? '').includes('json')) return text ? JSON.parse(text) : {};
  return Object.fromEntries(new URLSearchParams(text));
}

/** Records the branch's current files as a new commit and moves the branch to it. */
function record(fullName: string, repo: GithubRepo, branch: string): string {
  const id = sha(`${fullName}:${branch}:${repo.commitLog.size}:${repo.commits}`);
  repo.commitLog.set(id, new Map(repo.branches.get(branch)));
  repo.heads.set(branch, id);
  return id;
}

/** The files of a branch or of a recorded commit. */
const filesAt = (repo: GithubRepo, ref: string) => repo.commitLog.get(ref) ?? repo.branches.get(ref);
const treeShaOf = (files: Map<string, Buffer>) =>
  sha(
    [...files]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([p, b]) => `${p}:${sha(b)}`)
      .join('\n'),
  );

export async function startGithubFake(o: { login?: string } = {}): Promise<GithubFake> {
  const tokens = new Map<string, Token>();
  const refreshes = new Map<string, Refresh>();
  const codes = new Map<string, Code>();
  let limited = { count: 0, status: 403 as 403 | 429, retryAfter: 60 };

  const fake: GithubFake = {
    url: '',
    login: o.login ?? 'octo-user',
    clientId: 'Iv1.fakeclient',
    clientSecret: 'fake-client-secret-000',
    repos: new Map(),
    denied: new Set(),
    tokenTtlSeconds: 28_800,
    issued: [],
    tokenCalls: { authorization_code: 0, refresh_token: 0 },
    revoked: [],
    addRepo(fullName, opts = {}) {
      const defaultBranch = opts.defaultBranch ?? 'main';
      const files = new Map<string, Buffer>();
      for (const [p, v] of Object.entries(opts.files ?? {}))
        files.set(p, Buffer.isBuffer(v) ? v : Buffer.from(v));
      const branches = new Map<string, Map<string, Buffer>>([[defaultBranch, files]]);
      for (const b of opts.branches ?? []) branches.set(b, new Map(files));
      const repo: GithubRepo = {
        defaultBranch,
        branches,
        issues: [],
        pulls: [],
        commits: 0,
        id: 4200 + fake.repos.size,
        commitLog: new Map(),
        heads: new Map(),
        statuses: [],
      };
      fake.repos.set(fullName, repo);
      for (const b of branches.keys()) record(fullName, repo, b);
      return repo;
    },
    commit(fullName, branch, changes) {
      const repo = fake.repos.get(fullName)!;
      const files = repo.branches.get(branch)!;
      for (const [p, v] of Object.entries(changes)) {
        if (v === null) files.delete(p);
        else files.set(p, Buffer.from(v));
      }
      repo.commits++;
      return record(fullName, repo, branch);
    },
    issueToken(who = fake.login, ttl = fake.tokenTtlSeconds) {
      const access_token = rand('ghu_');
      const refresh_token = rand('ghr_');
      tokens.set(access_token, {
        login: who,
        expiresAt: ttl === null ? null : Date.now() + ttl * 1000,
        scope: 'repo',
      });
      refreshes.set(refresh_token, { login: who, scope: 'repo' });
      fake.issued.push(access_token, refresh_token);
      return { access_token, refresh_token };
    },
    expireAccessTokens(who) {
      for (const t of tokens.values()) if (!who || t.login === who) t.expiresAt = Date.now() - 1000;
    },
    revokeRefreshTokens(who) {
      for (const [k, r] of refreshes) if (!who || r.login === who) refreshes.delete(k);
    },
    rateLimitNext(count, r = {}) {
      limited = { count, status: r.status ?? 403, retryAfter: r.retryAfter ?? 60 };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function tokenAnswer(res: http.ServerResponse, who: string, scope: string) {
    const t = fake.issueToken(who);
    json(res, 200, {
      access_token: t.access_token,
      token_type: 'bearer',
      scope,
      ...(fake.tokenTtlSeconds === null
        ? {}
        : {
            expires_in: fake.tokenTtlSeconds,
            refresh_token: t.refresh_token,
            refresh_token_expires_in: 15_811_200,
          }),
    });
  }

  async function oauth(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<boolean> {
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      // The user consents at once; GitHub then redirects with the code and the same state.
      const q = url.searchParams;
      if (q.get('client_id') !== fake.clientId) return json(res, 404, { message: 'Not Found' });
      const code = rand('code_');
      codes.set(code, {
        login: fake.login,
        challenge: q.get('code_challenge') ?? '',
        method: q.get('code_challenge_method') ?? '',
        redirectUri: q.get('redirect_uri') ?? '',
        scope: (q.get('scope') ?? '').split(' ').join(','),
        used: false,
      });
      const back = new URL(q.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      if (q.has('state')) back.searchParams.set('state', q.get('state')!);
      res.writeHead(302, { location: back.toString() });
      res.end();
      return true;
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const body = parseBody(req, await readBody(req));
      if (body.client_id !== fake.clientId || body.client_secret !== fake.clientSecret) {
        return json(res, 200, {
          error: 'incorrect_client_credentials',
          error_description: 'The client_id and/or client_secret passed are incorrect.',
        });
      }
      if (body.grant_type === 'refresh_token') {
        fake.tokenCalls.refresh_token++;
        const r = refreshes.get(body.refresh_token ?? '');
        if (!r)
          return json(res, 200, {
            error: 'bad_refresh_token',
            error_description: 'The refresh token passed is incorrect or expired.',
          });
        refreshes.delete(body.refresh_token);
        tokenAnswer(res, r.login, r.scope);
        return true;
      }
      fake.tokenCalls.authorization_code++;
      const c = codes.get(body.code ?? '');
      const verifier = body.code_verifier ?? '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (!c || c.used || c.redirectUri !== body.redirect_uri) {
        return json(res, 200, {
          error: 'bad_verification_code',
          error_description: 'The code passed is incorrect or expired.',
        });
      }
      c.used = true;
      if (c.method !== 'S256' || challenge !== c.challenge) {
        return json(res, 200, {
          error: 'invalid_grant',
          error_description: 'The code_verifier does not match the challenge.',
        });
      }
      tokenAnswer(res, c.login, c.scope);
      return true;
    }
    const revoke = url.pathname.match(/^\/applications\/([^/]+)\/token$/);
    if (req.method === 'DELETE' && revoke) {
      const body = parseBody(req, await readBody(req));
      const basic = Buffer.from(`${fake.clientId}:${fake.clientSecret}`).toString('base64');
      if (req.headers.authorization !== `Basic ${basic}` || decodeURIComponent(revoke[1]) !== fake.clientId) {
        return json(res, 401, { message: 'Bad credentials' });
      }
      if (!tokens.delete(body.access_token ?? '')) return json(res, 404, { message: 'Not Found' });
      fake.revoked.push(body.access_token);
      res.writeHead(204).end();
      return true;
    }
    return false;
  }

  function page<T>(res: http.ServerResponse, url: URL, items: T[]) {
    const per = Math.min(Number(url.searchParams.get('per_page') ?? 30) || 30, 100);
    const n = Math.max(Number(url.searchParams.get('page') ?? 1) || 1, 1);
    const last = Math.max(Math.ceil(items.length / per), 1);
    const links: string[] = [];
    const at = (p: number) => {
      const u = new URL(url.pathname + url.search, fake.url);
      u.searchParams.set('page', String(p));
      u.searchParams.set('per_page', String(per));
      return u.toString();
    };
    if (n < last) links.push(`<${at(n + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
    if (n > 1) links.push(`<${at(1)}>; rel="first"`, `<${at(n - 1)}>; rel="prev"`);
    json(res, 200, items.slice((n - 1) * per, n * per), links.length ? { link: links.join(', ') } : {});
  }

  async function api(req: http.IncomingMessage, res: http.ServerResponse, url: URL) {
    const auth = req.headers.authorization ?? '';
    const m = auth.match(/^(?:token|bearer) (.+)$/i);
    const t = m ? tokens.get(m[1]) : undefined;
    if (!t || (t.expiresAt !== null && t.expiresAt < Date.now())) {
      return json(res, 401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
    }
    if (limited.count > 0) {
      limited.count--;
      const reset = String(Math.floor(Date.now() / 1000) + limited.retryAfter);
      if (limited.status === 429) {
        return json(
          res,
          429,
          { message: 'You have exceeded a secondary rate limit.' },
          { 'retry-after': String(limited.retryAfter) },
        );
      }
      return json(
        res,
        403,
        {
          message: 'API rate limit exceeded for user ID 1.',
          documentation_url: 'https://docs.github.com/rest/rate-limit',
        },
        { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset },
      );
    }
    if (req.method === 'GET' && url.pathname === '/user')
      return json(res, 200, { login: t.login, id: 1, type: 'User' });

    const rm = url.pathname.match(/^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/);
    if (!rm) return json(res, 404, { message: 'Not Found' });
    const full = `${rm[1]}/${rm[2]}`;
    const repo = fake.repos.get(full);
    if (!repo)
      return json(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    if (fake.denied.has(t.login)) {
      return json(res, 403, {
        message: 'Resource not accessible by integration',
        documentation_url: 'https://docs.github.com/rest',
      });
    }
    const rest = rm[3] ?? '';
    const ref = url.searchParams.get('ref') ?? repo.defaultBranch;

    if (req.method === 'GET' && rest === '') {
      return json(res, 200, {
        id: repo.id,
        name: rm[2],
        full_name: full,
        private: true,
        default_branch: repo.defaultBranch,
        permissions: { admin: false, push: true, pull: true },
      });
    }
    if (req.method === 'GET' && rest === '/branches') {
      const names = [...repo.branches.keys()].sort();
      return page(
        res,
        url,
        names.map((name) => ({ name, commit: { sha: sha(name) }, protected: false })),
      );
    }
    const tree = rest.match(/^\/git\/trees\/(.+)$/);
    if (req.method === 'GET' && tree) {
      const files = filesAt(repo, decodeURIComponent(tree[1]));
      if (!files) return json(res, 404, { message: 'Not Found' });
      return json(res, 200, {
        sha: sha(tree[1]),
        tree: [...files].map(([path, b]) => ({
          path,
          mode: '100644',
          type: 'blob',
          sha: sha(b),
          size: b.length,
        })),
        truncated: false,
      });
    }
    const contents = rest.match(/^\/contents\/(.+)$/);
    if (contents) {
      const path = decodeURIComponent(contents[1]);
      if (req.method === 'GET') {
        const b = filesAt(repo, ref)?.get(path);
        if (!b)
          return json(res, 404, {
            message: 'Not Found',
            documentation_url: 'https://docs.github.com/rest/repos/contents',
          });
        if (/vnd\.github(\.v3)?\.raw/.test(req.headers.accept ?? '')) {
          res.writeHead(200, {
            'content-type': 'application/vnd.github.raw; charset=utf-8',
            'content-length': String(b.length),
          });
          return res.end(b);
        }
        return json(res, 200, {
          type: 'file',
          encoding: b.length > 1024 * 1024 ? 'none' : 'base64',
          size: b.length,
          name: path.split('/').pop(),
          path,
          sha: sha(b),
          content: b.length > 1024 * 1024 ? '' : b.toString('base64'),
        });
      }
      if (req.method === 'PUT') {
        const body = JSON.parse((await readBody(req)).toString());
        const branch = body.branch ?? repo.defaultBranch;
        const files = repo.branches.get(branch);
        if (!files) return json(res, 404, { message: `Branch ${branch} not found` });
        if (typeof body.message !== 'string' || typeof body.content !== 'string') {
          return json(res, 422, { message: 'Invalid request.' });
        }
        const existing = files.get(path);
        if (existing && !body.sha)
          return json(res, 422, { message: 'Invalid request.\n\n"sha" wasn\'t supplied.' });
        if (existing && body.sha !== sha(existing))
          return json(res, 409, { message: `${path} does not match ${body.sha}` });
        const bytes = Buffer.from(body.content, 'base64');
        files.set(path, bytes);
        repo.commits++;
        return json(res, existing ? 200 : 201, {
          content: { name: path.split('/').pop(), path, sha: sha(bytes), size: bytes.length },
          commit: { sha: record(full, repo, branch), message: body.message },
        });
      }
    }
    // GET /repos/{owner}/{repo}/commits/{ref}: a commit by sha, or a branch's head.
    const commit = rest.match(/^\/commits\/([^/]+)$/);
    if (req.method === 'GET' && commit) {
      const ref = decodeURIComponent(commit[1]);
      const id = repo.commitLog.has(ref) ? ref : repo.heads.get(ref);
      const files = id ? repo.commitLog.get(id) : undefined;
      if (!id || !files) return json(res, 422, { message: `No commit found for SHA: ${ref}` });
      return json(res, 200, {
        sha: id,
        commit: { tree: { sha: treeShaOf(files) }, message: 'commit' },
        parents: [],
      });
    }
    // POST /repos/{owner}/{repo}/statuses/{sha}: state, target_url, description, context.
    const status = rest.match(/^\/statuses\/([0-9a-f]{40})$/);
    if (req.method === 'POST' && status) {
      const body = JSON.parse((await readBody(req)).toString() || '{}');
      if (!repo.commitLog.has(status[1]))
        return json(res, 422, { message: `No commit found for SHA: ${status[1]}` });
      if (
        !['error', 'failure', 'pending', 'success'].includes(body.state) ||
        (body.description ?? '').length > 140
      )
        return json(res, 422, { message: 'Validation Failed' });
      const posted = {
        sha: status[1],
        state: body.state,
        context: body.context ?? 'default',
        target_url: body.target_url ?? null,
        description: body.description ?? null,
      };
      repo.statuses.push(posted);
      return json(res, 201, { id: repo.statuses.length, url: `${fake.url}${url.pathname}`, ...posted });
    }
    if (req.method === 'GET' && (rest === '/issues' || rest === '/pulls')) {
      const state = url.searchParams.get('state') ?? 'open';
      const all = rest === '/issues' ? repo.issues : repo.pulls;
      return page(
        res,
        url,
        all.filter((i) => state === 'all' || i.state === state),
      );
    }
    return json(res, 404, { message: 'Not Found' });
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    oauth(req, res, url)
      .then((done) => (done ? undefined : api(req, res, url)))
      .catch(() => {
        if (!res.headersSent) json(res, 500, { message: 'fake failed' });
        else res.destroy();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** GitHub-shaped issue and pull request records for seeding. */
export function githubIssue(n: number, o: { state?: string; pull?: boolean } = {}) {
  return {
    id: 1000 + n,
    number: n,
    title: `Issue ${n}`,
    state: o.state ?? 'open',
    user: { login: 'octo-user' },
    labels: [{ name: n % 2 ? 'bug' : 'feature' }],
    comments: n % 5,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
    updated_at: new Date(Date.UTC(2026, 0, 2, 0, n)).toISOString(),
    closed_at: null,
    html_url: `https://github.example/acme/repo/issues/${n}`,
    body: `Body of ${n}`,
    ...(o.pull ? { pull_request: { url: 'x' } } : {}),
  };
}

export function githubPull(n: number, o: { state?: string } = {}) {
  return {
    id: 2000 + n,
    number: n,
    title: `PR ${n}`,
    state: o.state ?? 'open',
    user: { login: 'octo-user' },
    draft: n % 3 === 0,
    head: { ref: `feature-${n}` },
    base: { ref: 'main' },
    created_at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
    updated_at: new Date(Date.UTC(2026, 0, 2, 0, n)).toISOString(),
    closed_at: null,
    merged_at: null,
    html_url: `https://github.example/acme/repo/pull/${n}`,
  };
}
