import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GithubFake, githubIssue, githubPull, startGithubFake } from '../../../../test/peers/github-api';
import { batches, bytesOf, collect, stepContext } from '../../../../test/support/step-context';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { githubConnector as gh, githubConfigSchema } from './index';

// The GitHub connector against the fake GitHub REST API, through @octokit/rest.

describe('GitHub connector', () => {
  let fake: GithubFake;
  let token: string;
  const ctx = (extra: Partial<ConnectorContext> = {}): ConnectorContext => ({
    policy: { allowPrivate: true },
    limits: defaultLimits,
    ...extra,
  });
  const conn = (t: string | null = token, repo = 'repo') => ({
    config: githubConfigSchema.parse({ owner: 'acme', repo, base_url: fake.url, allow_private_hosts: true }),
    credentials: t === null ? null : { access_token: t },
  });
  const failsWith = async (p: Promise<unknown>, code: string) => {
    const err = await p.then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(ConnectorError);
    expect(err.code).toBe(code);
    expect(err.message).not.toContain(token);
    return err as ConnectorError;
  };

  beforeAll(async () => {
    fake = await startGithubFake();
    const repo = fake.addRepo('acme/repo', {
      files: { 'data/people.csv': 'id,name\n1,Ada\n2,Grace\n', 'README.md': '# hi\n' },
      branches: Array.from({ length: 140 }, (_, i) => `feature-${String(i).padStart(3, '0')}`),
    });
    repo.issues = Array.from({ length: 250 }, (_, i) => githubIssue(i + 1, { pull: i % 10 === 0 }));
    repo.pulls = Array.from({ length: 120 }, (_, i) =>
      githubPull(i + 1, { state: i % 4 === 0 ? 'closed' : 'open' }),
    );
    token = fake.issueToken().access_token;
  });
  afterAll(() => fake?.close());

  it('tests the connection, and names what went wrong', async () => {
    await gh.test(conn(), ctx());
    const bad = await failsWith(gh.test(conn('ghu_not-a-token'), ctx()), 'AUTHENTICATION_FAILED');
    expect(bad.message).toMatch(/rejected the access token/);
    await failsWith(gh.test(conn(null), ctx()), 'AUTHENTICATION_FAILED');
    await failsWith(gh.test(conn(token, 'missing'), ctx()), 'NOT_FOUND');

    fake.denied.add('octo-user');
    try {
      await failsWith(gh.test(conn(), ctx()), 'PERMISSION_DENIED');
    } finally {
      fake.denied.delete('octo-user');
    }

    fake.rateLimitNext(2, { status: 403, retryAfter: 3600 });
    const limited = await failsWith(gh.test(conn(), ctx()), 'RATE_LIMITED');
    expect(limited.message).toMatch(/retry after \d+ seconds/);
    fake.rateLimitNext(0);
    // A short wait is waited out once.
    fake.rateLimitNext(1, { status: 429, retryAfter: 1 });
    await gh.test(conn(), ctx());
  });

  it('refreshes the token once after a 401 and replays the request', async () => {
    const fresh = fake.issueToken().access_token;
    let asked = 0;
    const refreshCredentials = async () => {
      asked++;
      return { access_token: fresh };
    };
    await gh.test(conn('ghu_expired'), ctx({ refreshCredentials }));
    expect(asked).toBe(1);
    // A refusal of the refresh is reported with its own message.
    const refused = async () => {
      throw new ConnectorError(
        'AUTHENTICATION_FAILED',
        'GitHub refused to refresh the access token (bad_refresh_token)',
      );
    };
    const err = await failsWith(
      gh.test(conn('ghu_expired'), ctx({ refreshCredentials: refused })),
      'AUTHENTICATION_FAILED',
    );
    expect(err.message).toMatch(/refused to refresh/);
  });

  it('imports the schema: repository files and object collections', async () => {
    const schema = await gh.discover.importSchema(conn(), ctx());
    expect(schema.schema_type).toBe('file');
    const names = (schema as any).files.map((f: any) => f.name);
    expect(names).toEqual(
      expect.arrayContaining(['data/people.csv', 'README.md', 'issues', 'pull_requests']),
    );
    const issues = (schema as any).files.find((f: any) => f.name === 'issues');
    expect(issues.fields.map((f: any) => f.name)).toContain('title');
  });

  it('executes statements: branches (Link paging), files, issues, pull requests, commits', async () => {
    const run = (statement: unknown, parameters = {}, extra: Partial<ConnectorContext> = {}) =>
      gh.query.execute(conn(), gh.query.statementSchema.parse(statement), parameters, ctx(extra));

    const branches = await run({ type: 'github', operation: 'list_branches' });
    expect(branches.result_type).toBe('git');
    expect((branches.payload as any).branches).toHaveLength(141);
    expect((branches.payload as any).branches.filter((b: any) => b.is_default)).toEqual([
      { name: 'main', is_default: true },
    ]);

    const file = await run(
      { type: 'github', operation: 'read_file', path: 'data/{{name}}.csv' },
      { name: 'people' },
    );
    expect(file.payload).toMatchObject({
      path: 'data/people.csv',
      ref: 'main',
      content: 'id,name\n1,Ada\n2,Grace\n',
    });
    expect((file.payload as any).file).toMatchObject({
      mime_type: 'text/csv',
      size_bytes: 22,
      digest_algorithm: 'sha256',
    });
    await expect(run({ type: 'github', operation: 'read_file', path: 'nope.txt' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });

    const issues = await run({ type: 'github', operation: 'list_issues', state: 'all' });
    expect(issues.result_type).toBe('object_rows');
    expect(issues.row_count).toBe(225); // 250 minus the 25 pull requests the endpoint also lists
    expect((issues.payload as any).rows[0]).toMatchObject({
      number: 2,
      title: 'Issue 2',
      author: 'octo-user',
    });

    const pulls = await run({ type: 'github', operation: 'list_pull_requests', state: 'open', max_rows: 50 });
    expect(pulls.row_count).toBe(50);
    expect(pulls.truncated).toBe(true);

    const commit = await run(
      {
        type: 'github',
        operation: 'commit_file',
        path: 'notes/{{d}}.md',
        content: 'hello {{d}}',
        message: 'add',
      },
      { d: 'today' },
    );
    expect(commit.payload).toMatchObject({ path: 'notes/today.md', branch: 'main' });
    expect(fake.repos.get('acme/repo')!.branches.get('main')!.get('notes/today.md')!.toString()).toBe(
      'hello today',
    );
    await expect(
      run(
        { type: 'github', operation: 'commit_file', path: 'x.md', content: 'x', message: 'm' },
        {},
        { readOnly: true },
      ),
    ).rejects.toMatchObject({ code: 'UNSUPPORTED_OPERATION' });
  });

  it('reads a repository CSV as a pipeline source and commits rows as a sink', async () => {
    const src = stepContext({
      kind: 'source',
      data_source_ref: 'gh',
      operation: { operation_type: 'git', path: 'data/people.csv' },
    });
    const out = await gh.source.read(conn(), src, ctx());
    expect(out.payload.kind).toBe('csv');
    expect((await bytesOf(out.payload)).toString()).toBe('id,name\n1,Ada\n2,Grace\n');
    expect(src.counters.bytes_in).toBe(22);

    const sink = stepContext({
      kind: 'sink',
      data_source_ref: 'gh',
      operation: { operation_type: 'git', path: 'out/{{runtime.run_slug}}.csv', message: 'export' },
    });
    const payload = {
      kind: 'rows' as const,
      columns: [
        { name: 'id', type: 'bigint' },
        { name: 'name', type: 'text' },
      ],
      batches: batches([[1, 'Ada, "the first"']], [[2, null]]),
    };
    const res = await gh.sink.write(conn(), payload, sink, ctx());
    expect(res.rows).toBe(2);
    const stored = fake.repos.get('acme/repo')!.branches.get('main')!.get('out/run-1.csv')!.toString();
    expect(stored).toBe('"id","name"\n"1","Ada, ""the first"""\n"2",\n');
    // Writing again updates the file (with its blob sha).
    await gh.sink.write(
      conn(),
      {
        kind: 'csv',
        delimiter: ',',
        header: true,
        chunks: (async function* () {
          yield Buffer.from('a\n1\n');
        })(),
      },
      sink,
      ctx(),
    );
    expect(fake.repos.get('acme/repo')!.branches.get('main')!.get('out/run-1.csv')!.toString()).toBe(
      'a\n1\n',
    );

    const objects = stepContext({
      kind: 'source',
      data_source_ref: 'gh',
      operation: { operation_type: 'object_rows', object: 'pull_requests', state: 'all' },
    });
    const rows = await gh.source.read(conn(), objects, ctx());
    const { items } = await collect(rows.payload);
    expect(items).toHaveLength(120);
  });
});
