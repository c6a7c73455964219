import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GitlabFake,
  gitlabIssue,
  gitlabMergeRequest,
  startGitlabFake,
} from '../../../../test/peers/gitlab-api';
import { batches, bytesOf, collect, stepContext } from '../../../../test/support/step-context';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { gitlabConfigSchema, gitlabConnector as gl } from './index';

// The GitLab connector against the fake GitLab API v4, through @gitbeaker/rest.

describe('GitLab connector', () => {
  let fake: GitlabFake;
  let token: string;
  const ctx = (extra: Partial<ConnectorContext> = {}): ConnectorContext => ({
    policy: { allowPrivate: true },
    limits: defaultLimits,
    ...extra,
  });
  const conn = (t: string | null = token, project = 'acme/data') => ({
    config: gitlabConfigSchema.parse({ project, base_url: fake.url, allow_private_hosts: true }),
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
    fake = await startGitlabFake();
    const p = fake.addProject('acme/data', {
      files: { 'data/people.csv': 'id,name\n1,Ada\n2,Grace\n', 'docs/readme.md': '# hi\n' },
      branches: Array.from({ length: 130 }, (_, i) => `topic-${String(i).padStart(3, '0')}`),
    });
    p.issues = Array.from({ length: 230 }, (_, i) =>
      gitlabIssue(i + 1, { state: i % 2 ? 'opened' : 'closed' }),
    );
    p.mergeRequests = Array.from({ length: 110 }, (_, i) =>
      gitlabMergeRequest(i + 1, { state: i % 5 ? 'opened' : 'merged' }),
    );
    token = fake.issueToken().access_token;
  });
  afterAll(() => fake?.close());

  it('tests the connection, and names what went wrong', async () => {
    await gl.test(conn(), ctx());
    await failsWith(gl.test(conn('glat-wrong'), ctx()), 'AUTHENTICATION_FAILED');
    await failsWith(gl.test(conn(null), ctx()), 'AUTHENTICATION_FAILED');
    await failsWith(gl.test(conn(token, 'acme/missing'), ctx()), 'NOT_FOUND');
    fake.denied.add('gl-user');
    try {
      await failsWith(gl.test(conn(), ctx()), 'PERMISSION_DENIED');
    } finally {
      fake.denied.delete('gl-user');
    }
    fake.rateLimitNext(2, 120);
    const limited = await failsWith(gl.test(conn(), ctx()), 'RATE_LIMITED');
    expect(limited.message).toMatch(/retry after 120 seconds/);
    fake.rateLimitNext(1, 1);
    await gl.test(conn(), ctx());
  });

  it('refreshes once after a 401 for an expired token', async () => {
    const old = fake.issueToken('expiring').access_token;
    fake.expireAccessTokens('expiring');
    const fresh = fake.issueToken('expiring').access_token;
    let asked = 0;
    const refreshCredentials = async () => {
      asked++;
      return { access_token: fresh };
    };
    await gl.test(conn(old), ctx({ refreshCredentials }));
    expect(asked).toBe(1);
  });

  it('imports the schema and executes statements with x-next-page paging', async () => {
    const schema = (await gl.discover.importSchema(conn(), ctx())) as any;
    expect(schema.files.map((f: any) => f.name)).toEqual([
      'data/people.csv',
      'docs/readme.md',
      'issues',
      'merge_requests',
    ]);

    const run = (statement: unknown, parameters = {}) =>
      gl.query.execute(conn(), gl.query.statementSchema.parse(statement), parameters, ctx());
    const branches = await run({ type: 'gitlab', operation: 'list_branches' });
    expect((branches.payload as any).branches).toHaveLength(131);
    const file = await run({
      type: 'gitlab',
      operation: 'read_file',
      path: 'data/people.csv',
      ref: 'topic-001',
    });
    expect((file.payload as any).content).toBe('id,name\n1,Ada\n2,Grace\n');
    const issues = await run({ type: 'gitlab', operation: 'list_issues', state: 'open' });
    expect(issues.row_count).toBe(115);
    expect((issues.payload as any).rows[0]).toMatchObject({ number: 2, state: 'open', labels: 'feature,ui' });
    const mrs = await run({ type: 'gitlab', operation: 'list_merge_requests', state: 'all' });
    expect(mrs.result_type).toBe('object_rows');
    expect(mrs.row_count).toBe(110);
    await run({
      type: 'gitlab',
      operation: 'commit_file',
      path: 'notes/a.md',
      content: 'one',
      message: 'add',
    });
    await run({
      type: 'gitlab',
      operation: 'commit_file',
      path: 'notes/a.md',
      content: 'two',
      message: 'edit',
    });
    expect(fake.projects.get('acme/data')!.branches.get('main')!.get('notes/a.md')!.toString()).toBe('two');
  });

  it('reads a CSV file and object rows as pipeline sources, and commits rows as a sink', async () => {
    const src = stepContext({
      kind: 'source',
      data_source_ref: 'gl',
      operation: { operation_type: 'git', path: 'data/people.csv' },
    });
    const out = await gl.source.read(conn(), src, ctx());
    expect((await bytesOf(out.payload)).toString()).toBe('id,name\n1,Ada\n2,Grace\n');

    const sink = stepContext({
      kind: 'sink',
      data_source_ref: 'gl',
      operation: { operation_type: 'git', path: 'out/people.json' },
    });
    const rows = {
      kind: 'rows' as const,
      columns: [{ name: 'id', type: 'bigint' }],
      batches: batches([[1], [2]]),
    };
    expect((await gl.sink.write(conn(), rows, sink, ctx())).rows).toBe(2);
    expect(
      JSON.parse(fake.projects.get('acme/data')!.branches.get('main')!.get('out/people.json')!.toString()),
    ).toEqual([{ id: 1 }, { id: 2 }]);

    const mrs = stepContext({
      kind: 'source',
      data_source_ref: 'gl',
      operation: { operation_type: 'object_rows', object: 'merge_requests', state: 'all', max_rows: 105 },
    });
    const { items } = await collect((await gl.source.read(conn(), mrs, ctx())).payload);
    expect(items).toHaveLength(105);
    const bad = stepContext({
      kind: 'source',
      data_source_ref: 'gl',
      operation: { operation_type: 'object_rows', object: 'pull_requests' },
    });
    await expect(gl.source.read(conn(), bad, ctx())).rejects.toMatchObject({ code: 'INVALID_STATEMENT' });
  });
});
