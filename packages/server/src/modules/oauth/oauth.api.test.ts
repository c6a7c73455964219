import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GithubFake, githubIssue, startGithubFake } from '../../../../../test/peers/github-api';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { waitUntil } from '../../../../../test/support/runs';

// OAuth of the hosted git provider kinds over the API, against the fake GitHub (authorize,
// token and revoke endpoints with PKCE): single-use state, stale revisions, refresh before
// expiry and on 401, a refused refresh failing the credential once, revocation — and tokens
// that never appear in a response, event or log line.

const ORG = '/organizations/acme';
const DS = `${ORG}/data-sources`;

describe('OAuth for hosted git providers (GitHub)', () => {
  let t: TestApp;
  let fake: GithubFake;
  let token: string;
  const bodies: string[] = [];
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await t.call(method, url, { token, body });
    bodies.push(res.body);
    return res;
  };
  const ok = async (p: ReturnType<typeof call>, status: number) => {
    const res = await p;
    expect(res.statusCode, res.body).toBe(status);
    return res.json();
  };
  /** The browser's part: open the consent page, follow the provider's redirect to our callback. */
  const consent = async (authorizationUrl: string) => {
    const res = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    return `${back.pathname}${back.search}`;
  };
  const callback = async (path: string) => {
    const res = await t.call('GET', path);
    bodies.push(res.body);
    return res;
  };
  const connect = async (slug: string, as = 'octo-user') => {
    fake.login = as;
    const a = await ok(call('POST', `${DS}/${slug}/oauth:authorize`), 200);
    return ok(callback(await consent(a.authorization_url)), 200);
  };
  const source = (slug: string, repo = 'repo') => ({
    type: 'github',
    name: slug,
    slug,
    config: { owner: 'acme', repo, base_url: fake.url, allow_private_hosts: true },
  });
  const credentialFailedEvents = async (slug: string) => {
    const page = await ok(call('GET', `${ORG}/events?entity_slug=${slug}&limit=100`), 200);
    return page.events.filter((e: any) => e.metadata?.notification_type === 'credential_failed');
  };

  beforeAll(async () => {
    fake = await startGithubFake();
    fake.addRepo('acme/repo', { files: { 'a.csv': 'x\n1\n' } }).issues.push(githubIssue(1), githubIssue(2));
    t = await startTestApp({
      worker: true,
      env: {
        SLUICE_GITHUB_OAUTH_CLIENT_ID: fake.clientId,
        SLUICE_GITHUB_OAUTH_CLIENT_SECRET: fake.clientSecret,
        SLUICE_GITHUB_OAUTH_URL: fake.url,
        SLUICE_GITHUB_API_URL: fake.url,
        SLUICE_OAUTH_REDIRECT_URL: 'http://127.0.0.1:8080/oauth/callback',
      },
    });
    token = (await t.bootstrap('acme')).api_key;
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('connects: pending, authorize with state and PKCE S256, callback, active', async () => {
    const created = await ok(call('POST', DS, source('gh')), 201);
    expect(created.credential).toMatchObject({ kind: 'oauth2_grant', status: 'pending' });
    expect(created.organization_gitlab_connection).toBe(false);

    const a = await ok(
      call('POST', `${DS}/gh/oauth:authorize`, { connection_revision: created.connection_revision }),
      200,
    );
    expect(a.connection_revision).toBe(created.connection_revision);
    const url = new URL(a.authorization_url);
    expect(url.origin + url.pathname).toBe(`${fake.url}/login/oauth/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')!.length).toBeGreaterThanOrEqual(43);
    expect(url.searchParams.get('redirect_uri')).toBe('http://127.0.0.1:8080/oauth/callback');

    const back = await consent(a.authorization_url);
    const done = await ok(callback(back), 200);
    expect(done).toMatchObject({
      organization_slug: 'acme',
      data_source_slug: 'gh',
      connection_revision: created.connection_revision + 1,
    });
    expect(done.credential).toMatchObject({ kind: 'oauth2_grant', status: 'active' });
    expect(done.credential.oauth).toMatchObject({
      provider: 'github',
      account: 'octo-user',
      revoked_at: null,
      failure_code: null,
    });
    expect(done.credential.oauth.scopes).toEqual(['repo', 'read:user']);

    // The state is single use.
    const replay = await callback(back);
    expect(replay.statusCode).toBe(400);
    expect(replay.json().error.code).toBe('OAUTH_STATE_INVALID');

    const got = await ok(call('GET', `${DS}/gh`), 200);
    expect(got.credential.status).toBe('active');
    expect((await ok(call('POST', `${DS}/gh/test-connection`), 200)).ok).toBe(true);
  });

  it('refuses unknown, mismatched and stale-revision callbacks, and bad codes', async () => {
    await ok(call('POST', DS, source('gh-refuse')), 201);
    const unknown = await callback('/oauth/callback?code=abc&state=not-a-state-we-issued');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('OAUTH_STATE_INVALID');
    expect((await callback('/oauth/callback?code=abc')).statusCode).toBe(400);

    // A revision given by the caller must be the current one.
    const stale = await call('POST', `${DS}/gh-refuse/oauth:authorize`, { connection_revision: 99 });
    expect(stale.statusCode).toBe(409);

    // The data source changes between authorize and callback: the request is void (and used up).
    const a = await ok(call('POST', `${DS}/gh-refuse/oauth:authorize`), 200);
    const back = await consent(a.authorization_url);
    await ok(call('PATCH', `${DS}/gh-refuse`, { config: { default_branch: 'main' } }), 200);
    const changed = await callback(back);
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error.code).toBe('CONFLICT');
    expect((await callback(back)).statusCode).toBe(400);

    // A right state with a code the provider refuses (PKCE or code mismatch).
    const b = await ok(call('POST', `${DS}/gh-refuse/oauth:authorize`), 200);
    const backB = new URL(await consent(b.authorization_url), 'http://x');
    backB.searchParams.set('code', 'code_forged');
    const forged = await callback(`${backB.pathname}${backB.search}`);
    expect(forged.statusCode).toBe(400);
    expect(forged.json().error.code).toBe('OAUTH_FAILED');
    // The user declining at the provider.
    const c = await ok(call('POST', `${DS}/gh-refuse/oauth:authorize`), 200);
    const state = new URL(c.authorization_url).searchParams.get('state')!;
    const denied = await callback(`/oauth/callback?error=access_denied&state=${encodeURIComponent(state)}`);
    expect(denied.json().error).toMatchObject({ code: 'OAUTH_FAILED' });
    expect((await ok(call('GET', `${DS}/gh-refuse`), 200)).credential.status).toBe('pending');

    // Types with static credentials have no OAuth.
    await ok(
      call('POST', DS, {
        type: 'http',
        name: 'h',
        slug: 'h',
        config: { base_url: 'https://example.com' },
        credentials: {},
      }),
      201,
    );
    expect((await call('POST', `${DS}/h/oauth:authorize`)).statusCode).toBe(422);
  });

  it('refreshes before expiry and after a 401', async () => {
    fake.tokenTtlSeconds = 30; // inside the refresh margin: the next use refreshes
    await ok(call('POST', DS, source('gh-refresh')), 201);
    await connect('gh-refresh', 'refresh-user');
    const before = fake.tokenCalls.refresh_token;
    expect((await ok(call('POST', `${DS}/gh-refresh/test-connection`), 200)).ok).toBe(true);
    expect(fake.tokenCalls.refresh_token).toBe(before + 1);
    const shown = await ok(call('GET', `${DS}/gh-refresh`), 200);
    expect(shown.credential.oauth.last_refreshed_at).not.toBeNull();

    fake.tokenTtlSeconds = 28_800;
    await ok(call('POST', `${DS}/gh-refresh/test-connection`), 200); // refreshes to a long-lived token
    fake.expireAccessTokens('refresh-user'); // the provider drops it early: a 401, one refresh, a replay
    const n = fake.tokenCalls.refresh_token;
    expect((await ok(call('POST', `${DS}/gh-refresh/test-connection`), 200)).ok).toBe(true);
    expect(fake.tokenCalls.refresh_token).toBe(n + 1);
  });

  it('a refused refresh fails the credential once, with a credential_failed event', async () => {
    await ok(call('POST', DS, source('gh-fail')), 201);
    await connect('gh-fail', 'fail-user');
    fake.expireAccessTokens('fail-user');
    fake.revokeRefreshTokens('fail-user');
    const first = await ok(call('POST', `${DS}/gh-fail/test-connection`), 200);
    expect(first.ok).toBe(false);
    expect(first.error.code).toBe('AUTHENTICATION_FAILED');
    expect(first.error.message).toMatch(/refused to refresh/);
    const failed = await ok(call('GET', `${DS}/gh-fail`), 200);
    expect(failed.credential.status).toBe('failed');
    expect(failed.credential.oauth).toMatchObject({ failure_code: 'REFRESH_FAILED' });
    expect(failed.credential.oauth.failure_message).toMatch(/authorize the data source again/);

    expect((await ok(call('POST', `${DS}/gh-fail/test-connection`), 200)).ok).toBe(false);
    expect(await credentialFailedEvents('gh-fail')).toHaveLength(1);
    // The refused refresh is a credential_failed notification (critical), raised once.
    const notes = (
      await ok(call('GET', `/organizations/acme/notifications?notification_type=credential_failed`), 200)
    ).notifications;
    expect(notes.filter((n: any) => n.source_refs.some((r: any) => r.value === 'gh-fail'))).toEqual([
      expect.objectContaining({ severity: 'critical', lifecycle_state: 'open', occurrence_count: 1 }),
    ]);

    // Authorizing again replaces it (the failed one becomes rotated) and it works.
    await connect('gh-fail', 'fail-user');
    expect((await ok(call('GET', `${DS}/gh-fail`), 200)).credential.status).toBe('active');
    expect((await ok(call('POST', `${DS}/gh-fail/test-connection`), 200)).ok).toBe(true);
    // The working connection resolves it.
    const after = (
      await ok(call('GET', `/organizations/acme/notifications?notification_type=credential_failed`), 200)
    ).notifications;
    expect(
      after.find((n: any) => n.source_refs.some((r: any) => r.value === 'gh-fail'))?.lifecycle_state,
    ).toBe('resolved');
  });

  it('revokes at the provider and forgets the tokens', async () => {
    await ok(call('POST', DS, source('gh-revoke')), 201);
    await connect('gh-revoke');
    const revokedBefore = fake.revoked.length;
    const out = await ok(call('POST', `${DS}/gh-revoke/oauth:revoke`), 200);
    expect(out.credential.status).toBe('revoked');
    expect(out.credential.oauth.revoked_at).not.toBeNull();
    expect(fake.revoked.length).toBe(revokedBefore + 1);
    const test = await ok(call('POST', `${DS}/gh-revoke/test-connection`), 200);
    expect(test.ok).toBe(false);
    expect(test.error.code).toBe('AUTHENTICATION_FAILED');
    expect((await call('POST', `${DS}/gh-revoke/oauth:revoke`)).statusCode).toBe(409);

    // Deleting a connected data source revokes its token at the provider too.
    await ok(call('POST', DS, source('gh-delete')), 201);
    await connect('gh-delete');
    const before = fake.revoked.length;
    expect((await call('DELETE', `${DS}/gh-delete`)).statusCode).toBe(204);
    expect(fake.revoked.length).toBe(before + 1);
  });

  it('test-connection failures: missing permission and rate limit', async () => {
    fake.denied.add('octo-user');
    const denied = await ok(call('POST', `${DS}/gh/test-connection`), 200);
    fake.denied.delete('octo-user');
    expect(denied.error.code).toBe('PERMISSION_DENIED');
    fake.rateLimitNext(2, { status: 403, retryAfter: 600 });
    const limited = await ok(call('POST', `${DS}/gh/test-connection`), 200);
    fake.rateLimitNext(0);
    expect(limited.error.code).toBe('RATE_LIMITED');
    // Neither is a credential failure.
    expect((await ok(call('GET', `${DS}/gh`), 200)).credential.status).toBe('active');
  });

  it('imports the schema and executes a saved query', async () => {
    await ok(call('POST', `${DS}/gh/schema-import`), 202);
    const ready = await waitUntil(
      async () => (await call('GET', `${DS}/gh`)).json(),
      (d: any) => d.schema_status !== 'importing',
      20_000,
    );
    expect(ready.schema_status).toBe('ready');
    expect(ready.schema.files.map((f: any) => f.name)).toEqual(['a.csv', 'issues', 'pull_requests']);

    await ok(
      call('POST', `${ORG}/queries`, {
        name: 'Issues',
        slug: 'gh-issues',
        data_source_slug: 'gh',
        statement: { type: 'github', operation: 'list_issues', state: 'all' },
      }),
      201,
    );
    const exec = await ok(call('POST', `${ORG}/queries/gh-issues:execute`, { parameters: {} }), 200);
    expect(exec).toMatchObject({ status: 'succeeded', result_type: 'object_rows', row_count: 2 });
    const branches = await ok(call('GET', `${DS}/gh/branches`), 200);
    expect(branches).toEqual({
      branches: [{ name: 'main', is_default: true }],
      has_more: false,
      next_cursor: null,
      prev_cursor: null,
    });
  });

  it('never returns, logs or records a token', async () => {
    const events = await ok(call('GET', `${ORG}/events?limit=100`), 200);
    const audit = await ok(call('GET', `${ORG}/security-audit-events?limit=100`), 200);
    const everything = [...bodies, JSON.stringify(events), JSON.stringify(audit), t.logs()].join('\n');
    expect(fake.issued.length).toBeGreaterThan(4);
    for (const secret of [...fake.issued, fake.clientSecret]) expect(everything).not.toContain(secret);
  });
});
