import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GithubFake, githubIssue, startGithubFake } from '../peers/github-api';
import { startTestApp, type TestApp } from '../support/app';
import { connectOAuth } from '../support/oauth';
import { createSinkDatabase, pgQuery } from '../support/runs';
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

// GitHub in pipelines over the API with the in-process worker, authorized through OAuth against
// the fake GitHub: a 10,000-row CSV file of the repository into PostgreSQL, the table back into
// the repository as a committed CSV file, and issues (Link-paged) as rows.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_gh_${id}`;
const ROWS = 10_000;
const ISSUES = 2_500;

const csvOf = (n: number) =>
  `id,name,score\n${Array.from({ length: n }, (_, i) => `${i + 1},"Person, ${i + 1}",${(i * 7) % 101}`).join('\n')}\n`;

describe('GitHub pipelines', () => {
  let t: TestApp;
  let fake: GithubFake;
  let token: string;
  let sink: { drop(): Promise<unknown> };
  const call: Call = (method, url, body) => t.call(method, url, { token, body });

  beforeAll(async () => {
    sink = await createSinkDatabase(PG_DB);
    await pgQuery(PG_DB, 'create table people (id bigint primary key, name text not null, score int)');
    fake = await startGithubFake();
    const repo = fake.addRepo('acme/data', { files: { 'exports/people.csv': csvOf(ROWS) } });
    repo.issues = Array.from({ length: ISSUES }, (_, i) =>
      githubIssue(i + 1, { state: i % 3 ? 'open' : 'closed' }),
    );
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
    await createProjectAndEnvironment(call);
    await createDataSource(call, {
      type: 'github',
      name: 'Data repo',
      slug: 'data-repo',
      config: { owner: 'acme', repo: 'data', base_url: fake.url, allow_private_hosts: true },
    });
    await connectOAuth(t, token, 'acme', 'data-repo');
    await createDataSource(call, pgDataSource('warehouse', PG_DB));
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await sink?.drop();
  });

  it('loads a 10,000-row CSV file of the repository into PostgreSQL', async () => {
    await deployPipeline(call, {
      pipeline: 'repo-to-pg',
      spec: {
        steps: [
          {
            slug: 'file',
            kind: 'source',
            data_source_ref: 'repo',
            operation: { operation_type: 'git', path: 'exports/people.csv' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'wh',
            operation: { operation_type: 'sql', write: { table: 'people', mode: 'replace' } },
          },
        ],
        edges: [{ from: 'file', to: 'load' }],
      },
      bindings: { repo: 'data-repo', wh: 'warehouse' },
    });
    const run = await runToEnd(call, 'repo-to-pg', {});
    expect(run.state, JSON.stringify(run.error)).toBe('succeeded');
    expect(stepOf(run, 'load').rows_out).toBe(ROWS);
    const [agg] = await pgQuery(
      PG_DB,
      'select count(*)::int as n, sum(score)::int as s, max(name) as m from people',
    );
    expect(agg.n).toBe(ROWS);
    expect(agg.s).toBe(Array.from({ length: ROWS }, (_, i) => (i * 7) % 101).reduce((a, b) => a + b, 0));
  });

  it('commits the table back to the repository as a 10,000-row CSV file', async () => {
    await deployPipeline(call, {
      pipeline: 'pg-to-repo',
      spec: {
        steps: [
          {
            slug: 'people',
            kind: 'source',
            data_source_ref: 'wh',
            operation: { operation_type: 'sql', sql: 'SELECT id, name, score FROM people ORDER BY id' },
          },
          {
            slug: 'commit',
            kind: 'sink',
            data_source_ref: 'repo',
            operation: {
              operation_type: 'git',
              path: 'exports/people-copy.csv',
              message: 'Export {{runtime.run_slug}}',
            },
          },
        ],
        edges: [{ from: 'people', to: 'commit' }],
      },
      bindings: { repo: 'data-repo', wh: 'warehouse' },
    });
    const run = await runToEnd(call, 'pg-to-repo', { run_slug: 'export-1' });
    expect(run.state, JSON.stringify(run.error)).toBe('succeeded');
    expect(stepOf(run, 'commit').rows_out).toBe(ROWS);
    const committed = fake.repos
      .get('acme/data')!
      .branches.get('main')!
      .get('exports/people-copy.csv')!
      .toString();
    const lines = committed.trimEnd().split('\n');
    expect(lines).toHaveLength(ROWS + 1);
    expect(lines[0]).toBe('"id","name","score"');
    expect(lines[1]).toBe('"1","Person, 1","0"');
    expect(lines[ROWS]).toBe(`"${ROWS}","Person, ${ROWS}","${((ROWS - 1) * 7) % 101}"`);
    // Again: the file is updated in place (a second commit with the blob sha).
    const again = await runToEnd(call, 'pg-to-repo', { run_slug: 'export-2' });
    expect(again.state, JSON.stringify(again.error)).toBe('succeeded');
    expect(fake.repos.get('acme/data')!.commits).toBe(2);
  });

  it('reads 2,500 issues (25 Link-paged requests) as object rows into PostgreSQL', async () => {
    await deployPipeline(call, {
      pipeline: 'issues-to-pg',
      spec: {
        steps: [
          {
            slug: 'issues',
            kind: 'source',
            data_source_ref: 'repo',
            operation: { operation_type: 'object_rows', object: 'issues', state: 'all' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'wh',
            operation: {
              operation_type: 'sql',
              write: { table: 'issues', mode: 'upsert', key: ['number'], create_table: true },
            },
          },
        ],
        edges: [{ from: 'issues', to: 'load' }],
      },
      bindings: { repo: 'data-repo', wh: 'warehouse' },
    });
    const run = await runToEnd(call, 'issues-to-pg', {});
    expect(run.state, JSON.stringify(run.error)).toBe('succeeded');
    const [agg] = await pgQuery(
      PG_DB,
      "select count(*)::int as n, count(*) filter (where state = 'closed')::int as closed from issues",
    );
    expect(agg).toEqual({ n: ISSUES, closed: Math.ceil(ISSUES / 3) });
    const logs = await ok(
      call('GET', `${ORG}/projects/shop/environments/staging/runs/${run.slug}/logs?limit=100`),
      200,
    );
    const text = JSON.stringify(logs) + t.logs();
    for (const secret of fake.issued) expect(text).not.toContain(secret);
  });
});
