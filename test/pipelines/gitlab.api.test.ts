import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitlabFake, gitlabMergeRequest, startGitlabFake } from '../peers/gitlab-api';
import { startTestApp, type TestApp } from '../support/app';
import { connectOAuth } from '../support/oauth';
import { createSinkDatabase, pgQuery, waitUntil } from '../support/runs';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  pgDataSource,
  runToEnd,
  stepOf,
} from './support';

// GitLab over the API with the in-process worker, authorized through OAuth against the fake
// GitLab: connection tests (success, bad/expired credentials, missing permission, rate limit),
// schema import, a saved query, the organization-level GitLab connection shared by several
// sources, and a 10,000-row CSV file into PostgreSQL and back as a committed file.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_gl_${id}`;
const ROWS = 10_000;
const DS = `${ORG}/data-sources`;

const csvOf = (n: number) =>
  `id,name,score\n${Array.from({ length: n }, (_, i) => `${i + 1},Member ${i + 1},${i % 50}`).join('\n')}\n`;

describe('GitLab over the API', () => {
  let t: TestApp;
  let fake: GitlabFake;
  let token: string;
  let sink: { drop(): Promise<unknown> };
  const bodies: string[] = [];
  const call: Call = async (method, url, body) => {
    const res = await t.call(method, url, { token, body });
    bodies.push(res.body);
    return res;
  };
  const source = (slug: string, project = 'acme/data') => ({
    type: 'gitlab',
    name: slug,
    slug,
    config: { project, base_url: fake.url, allow_private_hosts: true },
  });
  const testConnection = async (slug: string) => ok(call('POST', `${DS}/${slug}/test-connection`), 200);

  beforeAll(async () => {
    sink = await createSinkDatabase(PG_DB);
    await pgQuery(PG_DB, 'create table members (id bigint primary key, name text not null, score int)');
    fake = await startGitlabFake();
    const project = fake.addProject('acme/data', {
      files: { 'exports/members.csv': csvOf(ROWS) },
      branches: ['develop'],
    });
    project.mergeRequests = Array.from({ length: 230 }, (_, i) => gitlabMergeRequest(i + 1));
    fake.addProject('acme/other', { files: { 'x.txt': 'x' } });
    t = await startTestApp({
      worker: true,
      env: {
        SLUICE_GITLAB_OAUTH_CLIENT_ID: fake.clientId,
        SLUICE_GITLAB_OAUTH_CLIENT_SECRET: fake.clientSecret,
        SLUICE_GITLAB_URL: fake.url,
      },
    });
    token = (await t.bootstrap('acme')).api_key;
    await createProjectAndEnvironment(call);
    await createDataSource(call, pgDataSource('warehouse', PG_DB));
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await sink?.drop();
  });

  it('connects through OAuth and tests the connection: success and each failure', async () => {
    await createDataSource(call, source('gl'));
    const done = await connectOAuth(t, token, 'acme', 'gl');
    expect(done.credential).toMatchObject({
      kind: 'oauth2_grant',
      status: 'active',
      oauth: { provider: 'gitlab', account: 'gl-user', scopes: ['api', 'read_user'] },
    });
    expect((await testConnection('gl')).ok).toBe(true);

    fake.denied.add('gl-user');
    const denied = await testConnection('gl');
    fake.denied.delete('gl-user');
    expect(denied.error.code).toBe('PERMISSION_DENIED');

    fake.rateLimitNext(2, 120);
    const limited = await testConnection('gl');
    fake.rateLimitNext(0);
    expect(limited.error).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringMatching(/retry after 120 seconds/),
    });

    // An expired access token is refreshed (GitLab rotates the refresh token too).
    fake.expireAccessTokens('gl-user');
    const refreshes = fake.tokenCalls.refresh_token;
    expect((await testConnection('gl')).ok).toBe(true);
    expect(fake.tokenCalls.refresh_token).toBe(refreshes + 1);
  });

  it('expired and unrefreshable credentials fail the credential once', async () => {
    await createDataSource(call, source('gl-expiring'));
    fake.username = 'expiring-user';
    await connectOAuth(t, token, 'acme', 'gl-expiring');
    fake.username = 'gl-user';
    fake.expireAccessTokens('expiring-user');
    fake.revokeRefreshTokens('expiring-user');
    const bad = await testConnection('gl-expiring');
    expect(bad.error.code).toBe('AUTHENTICATION_FAILED');
    await testConnection('gl-expiring');
    const shown = await ok(call('GET', `${DS}/gl-expiring`), 200);
    expect(shown.credential).toMatchObject({ status: 'failed', oauth: { failure_code: 'REFRESH_FAILED' } });
    const events = await ok(call('GET', `${ORG}/events?entity_slug=gl-expiring&limit=100`), 200);
    expect(
      events.events.filter((e: any) => e.metadata?.notification_type === 'credential_failed'),
    ).toHaveLength(1);
  });

  it('imports the schema, lists branches and executes a saved query', async () => {
    await ok(call('POST', `${DS}/gl/schema-import`), 202);
    const ready = await waitUntil(
      async () => (await call('GET', `${DS}/gl`)).json(),
      (d: any) => d.schema_status !== 'importing',
      20_000,
    );
    expect(ready.schema_status).toBe('ready');
    expect(ready.schema.files.map((f: any) => f.name)).toEqual([
      'exports/members.csv',
      'issues',
      'merge_requests',
    ]);
    expect(await ok(call('GET', `${DS}/gl/branches`), 200)).toEqual({
      branches: [
        { name: 'develop', is_default: false },
        { name: 'main', is_default: true },
      ],
      has_more: false,
      next_cursor: null,
      prev_cursor: null,
    });
    await ok(
      call('POST', `${ORG}/queries`, {
        name: 'MRs',
        slug: 'gl-mrs',
        data_source_slug: 'gl',
        statement: { type: 'gitlab', operation: 'list_merge_requests', state: 'open' },
      }),
      201,
    );
    const exec = await ok(call('POST', `${ORG}/queries/gl-mrs:execute`, { parameters: {} }), 200);
    expect(exec).toMatchObject({ status: 'succeeded', result_type: 'object_rows', row_count: 230 });
  });

  it('shares the organization-level GitLab connection between sources that opt in', async () => {
    await createDataSource(call, source('gl-shared-a'));
    await createDataSource(call, source('gl-shared-b', 'acme/other'));
    const a = await ok(call('PATCH', `${DS}/gl-shared-a`, { organization_gitlab_connection: true }), 200);
    expect(a).toMatchObject({
      organization_gitlab_connection: true,
      credential: { kind: 'oauth2_grant', status: 'pending' },
    });
    expect((await testConnection('gl-shared-a')).error.code).toBe('AUTHENTICATION_FAILED');

    fake.username = 'org-bot';
    await connectOAuth(t, token, 'acme', 'gl-shared-a');
    fake.username = 'gl-user';
    // The second source opts in afterwards and is connected at once, through the same grant.
    const b = await ok(call('PATCH', `${DS}/gl-shared-b`, { organization_gitlab_connection: true }), 200);
    expect(b.credential).toMatchObject({ status: 'active', oauth: { account: 'org-bot' } });
    expect((await testConnection('gl-shared-b')).ok).toBe(true);
    expect((await testConnection('gl-shared-a')).ok).toBe(true);
    // The source's own grant is untouched: opting out goes back to it (still pending).
    const out = await ok(call('PATCH', `${DS}/gl-shared-b`, { organization_gitlab_connection: false }), 200);
    expect(out.credential.status).toBe('pending');
    expect(
      (await call('PATCH', `${DS}/warehouse`, { organization_gitlab_connection: true })).statusCode,
    ).toBe(400);

    const revoked = await ok(call('POST', `${DS}/gl-shared-a/oauth:revoke`), 200);
    expect(revoked.credential.status).toBe('revoked');
    expect(fake.revoked).toHaveLength(1);
  });

  it('loads a 10,000-row CSV file into PostgreSQL and commits it back', async () => {
    await deployPipeline(call, {
      pipeline: 'gl-to-pg',
      spec: {
        steps: [
          {
            slug: 'file',
            kind: 'source',
            data_source_ref: 'repo',
            operation: { operation_type: 'git', path: 'exports/members.csv' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'wh',
            operation: { operation_type: 'sql', write: { table: 'members', mode: 'replace' } },
          },
        ],
        edges: [{ from: 'file', to: 'load' }],
      },
      bindings: { repo: 'gl', wh: 'warehouse' },
    });
    const run = await runToEnd(call, 'gl-to-pg', {});
    expect(run.state, JSON.stringify(run.error)).toBe('succeeded');
    expect(stepOf(run, 'load').rows_out).toBe(ROWS);
    const [agg] = await pgQuery(PG_DB, 'select count(*)::int as n, sum(score)::int as s from members');
    expect(agg).toEqual({
      n: ROWS,
      s: Array.from({ length: ROWS }, (_, i) => i % 50).reduce((x, y) => x + y, 0),
    });

    await deployPipeline(call, {
      pipeline: 'pg-to-gl',
      spec: {
        steps: [
          {
            slug: 'rows',
            kind: 'source',
            data_source_ref: 'wh',
            operation: { operation_type: 'sql', sql: 'SELECT id, name, score FROM members ORDER BY id' },
          },
          {
            slug: 'commit',
            kind: 'sink',
            data_source_ref: 'repo',
            operation: { operation_type: 'git', path: 'exports/members-copy.csv', branch: 'develop' },
          },
        ],
        edges: [{ from: 'rows', to: 'commit' }],
      },
      bindings: { repo: 'gl', wh: 'warehouse' },
    });
    const back = await runToEnd(call, 'pg-to-gl', {});
    expect(back.state, JSON.stringify(back.error)).toBe('succeeded');
    const committed = fake.projects
      .get('acme/data')!
      .branches.get('develop')!
      .get('exports/members-copy.csv')!
      .toString();
    const lines = committed.trimEnd().split('\n');
    expect(lines).toHaveLength(ROWS + 1);
    expect(lines[ROWS]).toBe(`"${ROWS}","Member ${ROWS}","${(ROWS - 1) % 50}"`);
  });

  it('never returns, logs or records a token', async () => {
    const events = await ok(call('GET', `${ORG}/events?limit=100`), 200);
    const everything = [...bodies, JSON.stringify(events), t.logs()].join('\n');
    expect(fake.issued.length).toBeGreaterThan(4);
    for (const secret of [...fake.issued, fake.clientSecret]) expect(everything).not.toContain(secret);
  });
});
