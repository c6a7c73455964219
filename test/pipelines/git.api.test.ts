import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitHttpsPeer, startGitHttpsPeer } from '../peers/git-https';
import { commitFiles, commitMessage, showFile } from '../peers/git-repos';
import { type GitSshPeer, startGitSshPeer } from '../peers/git-ssh';
import { startTestApp, type TestApp } from '../support/app';
import { createSinkDatabase, dumpStore, pgQuery } from '../support/runs';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  getRun,
  ORG,
  ok,
  PE,
  pgDataSource,
  runToEnd,
  stepOf,
} from './support';

// Issue 5 acceptance over the API with the in-process worker: git data sources over HTTPS and
// SSH (test connection and its failures, schema import, saved queries), a CSV from git into
// PostgreSQL and the table back into git as a committed file, and the token and
// private key kept out of every response, stored record and log.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_git_${id}`;
const TOKEN = `glpat-CanaryToken${randomBytes(10).toString('hex')}`;
// The 100,000-row run is test/pipelines/git-csv.test.ts (once, on the PostgreSQL store).
const ROWS = 2_000;

const csvOf = (n: number) => {
  const lines = ['id,name,amount,note'];
  for (let i = 1; i <= n; i++)
    lines.push(`${i},name ${i},${(i * 7) % 1000}.${i % 100},"a, ""quoted"" note ${i}"`);
  return `${lines.join('\n')}\n`;
};

describe('git data sources end to end', () => {
  let t: TestApp;
  let https: GitHttpsPeer;
  let ssh: GitSshPeer;
  let token: string;
  let repo: string;
  let sink: { drop(): Promise<unknown> };
  const savedCa = process.env.GIT_SSL_CAINFO;
  const call: Call = (method, url, body) => t.call(method, url, { token, body });

  const gitSource = (
    slug: string,
    config: Record<string, unknown> = {},
    credentials: Record<string, unknown> = {},
  ) => ({
    type: 'git',
    name: slug,
    slug,
    config: { repo_url: `${https.url}warehouse.git`, allow_private_hosts: true, ...config },
    credentials: { auth_type: 'https', username: 'sluice', token: TOKEN, ...credentials },
  });
  const sshSource = (slug: string, credentials: Record<string, unknown> = {}) => ({
    type: 'git',
    name: slug,
    slug,
    config: { repo_url: ssh.urlOf('keys'), allow_private_hosts: true },
    credentials: {
      auth_type: 'ssh',
      ssh_private_key: ssh.passphraseKey.privateKey,
      ssh_passphrase: ssh.passphraseKey.passphrase,
      ssh_known_hosts: ssh.knownHosts,
      ...credentials,
    },
  });
  const testConnection = (slug: string) =>
    ok(call('POST', `${ORG}/data-sources/${slug}/test-connection`), 200);

  beforeAll(async () => {
    https = await startGitHttpsPeer({ token: TOKEN });
    process.env.GIT_SSL_CAINFO = https.caFile;
    ssh = await startGitSshPeer();
    repo = https.createRepo('warehouse');
    commitFiles(repo, 'main', {
      'exports/orders.csv': csvOf(ROWS),
      'exports/small.json': '[{"a":1,"b":"x"}]',
    });
    commitFiles(ssh.createRepo('keys'), 'main', { 'k.csv': 'k\n1\n' });
    sink = await createSinkDatabase(PG_DB);
    await pgQuery(
      PG_DB,
      'create table git_orders (id bigint primary key, name text not null, amount numeric(10,2), note text)',
    );
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, gitSource('repo', { base_path: 'exports' }));
    await createDataSource(call, pgDataSource('warehouse', PG_DB));
    await createProjectAndEnvironment(call);
  }, 120_000);

  afterAll(async () => {
    process.env.GIT_SSL_CAINFO = savedCa;
    await t?.close();
    await https?.close();
    await ssh?.close();
    await sink?.drop();
  });

  it('refuses plain HTTP repo URLs and SSH credentials without known hosts (400)', async () => {
    const plain = await call(
      'POST',
      `${ORG}/data-sources`,
      gitSource('plain', { repo_url: 'http://example.com/r.git' }),
    );
    expect(plain.statusCode, plain.body).toBe(400);
    expect(plain.body).toContain('plain HTTP is not supported');
    const noHosts = await call('POST', `${ORG}/data-sources`, {
      ...sshSource('no-hosts'),
      credentials: { auth_type: 'ssh', ssh_private_key: ssh.clientKey.privateKey },
    });
    expect(noHosts.statusCode, noHosts.body).toBe(400);
    expect(noHosts.body).not.toContain('PRIVATE KEY');
  });

  it('tests connections over HTTPS and SSH and stores sanitized failures', async () => {
    expect(await testConnection('repo')).toMatchObject({ ok: true, error: null });
    await createDataSource(call, sshSource('ssh-repo'));
    expect(await testConnection('ssh-repo')).toMatchObject({ ok: true, error: null });

    const cases: [Record<string, unknown>, string][] = [
      [gitSource('bad-token', {}, { token: 'wrong' }), 'AUTHENTICATION_FAILED'],
      [gitSource('no-repo', { repo_url: `${https.url}nope.git` }), 'NOT_FOUND'],
      [gitSource('no-branch', { default_branch: 'nope' }), 'NOT_FOUND'],
      [gitSource('no-path', { base_path: 'nowhere' }), 'NOT_FOUND'],
      [gitSource('no-host', { repo_url: 'https://no-such-host-sluice.invalid/r.git' }), 'HOST_NOT_FOUND'],
      [sshSource('wrong-host-key', { ssh_known_hosts: ssh.otherKnownHosts }), 'HOST_KEY_MISMATCH'],
      [sshSource('wrong-passphrase', { ssh_passphrase: 'not it' }), 'AUTHENTICATION_FAILED'],
    ];
    for (const [body, code] of cases) {
      await createDataSource(call, body);
      const slug = body.slug as string;
      const res = await testConnection(slug);
      expect(res, slug).toMatchObject({ ok: false, error: { code } });
      const ds = await ok(call('GET', `${ORG}/data-sources/${slug}`), 200);
      expect(ds.test_error).toBe(res.error.message);
    }
  });

  it('lists branches through GET …/branches', async () => {
    const onePage = { has_more: false, next_cursor: null, prev_cursor: null };
    expect(await ok(call('GET', `${ORG}/data-sources/repo/branches`), 200)).toEqual({
      branches: [{ name: 'main', is_default: true }],
      ...onePage,
    });
    expect(await ok(call('GET', `${ORG}/data-sources/ssh-repo/branches`), 200)).toEqual({
      branches: [{ name: 'main', is_default: true }],
      ...onePage,
    });
    // The remote refused: 502 with the connector's code (503 is for our own store only).
    const failed = await call('GET', `${ORG}/data-sources/bad-token/branches`);
    expect(failed.statusCode, failed.body).toBe(502);
    expect(failed.json().error).toMatchObject({
      code: 'REMOTE_FAILED',
      detailed_error: 'AUTHENTICATION_FAILED',
    });
    const unsupported = await call('GET', `${ORG}/data-sources/warehouse/branches`);
    expect(unsupported.statusCode, unsupported.body).toBe(422);
    expect(unsupported.json().error.code).toBe('CONNECTOR_OPERATION_UNSUPPORTED');
  });

  it('imports the schema of the files under base_path', async () => {
    const accepted = await ok(call('POST', `${ORG}/data-sources/repo/schema-import`), 202);
    expect(accepted).toMatchObject({ schema_status: 'importing', enqueued: true });
    let ds: any;
    for (let i = 0; i < 100; i++) {
      ds = await ok(call('GET', `${ORG}/data-sources/repo`), 200);
      if (ds.schema_status !== 'importing') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ds.schema_status).toBe('ready');
    expect(ds.schema).toEqual({
      schema_type: 'file',
      type: 'git',
      files: [
        {
          name: 'orders.csv',
          mime_type: 'text/csv',
          resource_id: 'exports/orders.csv',
          fields: [
            { name: 'id', type: 'integer' },
            { name: 'name', type: 'string' },
            { name: 'amount', type: 'number' },
            { name: 'note', type: 'string' },
          ],
        },
        {
          name: 'small.json',
          mime_type: 'application/json',
          resource_id: 'exports/small.json',
          fields: [
            { name: 'a', type: 'integer' },
            { name: 'b', type: 'string' },
          ],
        },
      ],
    });
  });

  it('executes saved queries: list branches, read a file, write a commit', async () => {
    const save = (slug: string, statement: Record<string, unknown>) =>
      ok(call('POST', `${ORG}/queries`, { name: slug, slug, data_source_slug: 'repo', statement }), 201);
    const run = (slug: string, parameters: Record<string, unknown> = {}) =>
      ok(call('POST', `${ORG}/queries/${slug}:execute`, { parameters }), [200, 201]);
    await save('branches', { type: 'git', operation: 'list_branches' });
    await save('read', { type: 'git', path: '{{file}}' });
    await save('write', {
      type: 'git',
      operation: 'write',
      path: 'notes/{{name}}.txt',
      content: 'hello {{name}}\n',
      message: 'note for {{name}}',
    });
    const bad = await call('POST', `${ORG}/queries`, {
      name: 'bad',
      data_source_slug: 'repo',
      statement: { type: 'git', operation: 'read' },
    });
    expect(bad.statusCode, bad.body).toBe(400);

    expect(await run('branches')).toMatchObject({
      status: 'succeeded',
      result_type: 'git',
      result: { operation: 'list_branches', branches: [{ name: 'main', is_default: true }] },
    });
    const read = await run('read', { file: 'orders.csv' });
    expect(read).toMatchObject({
      status: 'succeeded',
      result_type: 'git',
      truncated: true,
      row_count: 1000,
      result: { format: 'csv', column_names: ['id', 'name', 'amount', 'note'], path: 'exports/orders.csv' },
    });
    expect(read.result.rows[0]).toEqual(['1', 'name 1', '7.1', 'a, "quoted" note 1']);
    const missing = await run('read', { file: 'missing.csv' });
    expect(missing).toMatchObject({ status: 'failed', error: { code: 'NOT_FOUND' } });
    const write = await run('write', { name: 'ada' });
    expect(write).toMatchObject({ status: 'succeeded', result: { operation: 'write', changed: true } });
    expect(showFile(repo, 'main', 'exports/notes/ada.txt').toString()).toBe('hello ada\n');
    expect(commitMessage(repo, 'main')).toBe('note for ada');
  });

  it('moves a CSV from git into PostgreSQL and the table back into git as a commit', async () => {
    await deployPipeline(call, {
      pipeline: 'git-to-pg',
      spec: {
        steps: [
          {
            slug: 'orders-file',
            kind: 'source',
            data_source_ref: 'repo',
            operation: { operation_type: 'git', path: 'orders.csv', ref: 'main' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'git_orders', mode: 'replace' } },
          },
        ],
        edges: [{ from: 'orders-file', to: 'load' }],
      },
      bindings: { repo: 'repo', warehouse: 'warehouse' },
    });
    const run = await runToEnd(call, 'git-to-pg', { run_slug: 'git-in-1' }, 180_000);
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(run, 'load')).toMatchObject({ rows_out: ROWS });
    const [stats] = await pgQuery(
      PG_DB,
      `select count(*)::int as n, count(distinct id)::int as ids, min(id)::int as lo, max(id)::int as hi,
              sum(amount)::text as total from git_orders`,
    );
    // amount "415.5" is 415.50: cents from the text as written.
    let cents = 0;
    for (let i = 1; i <= ROWS; i++) cents += ((i * 7) % 1000) * 100 + (i % 100) * (i % 100 < 10 ? 10 : 1);
    const total = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
    expect(stats).toEqual({ n: ROWS, ids: ROWS, lo: 1, hi: ROWS, total });
    const [row] = await pgQuery(
      PG_DB,
      'select name, amount::text as amount, note from git_orders where id = 1234',
    );
    expect(row).toEqual({ name: 'name 1234', amount: '638.34', note: 'a, "quoted" note 1234' });

    await deployPipeline(call, {
      pipeline: 'pg-to-git',
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'warehouse',
            operation: {
              operation_type: 'sql',
              sql: 'SELECT id, name, amount, note FROM git_orders ORDER BY id',
            },
          },
          {
            slug: 'commit',
            kind: 'sink',
            data_source_ref: 'repo',
            operation: {
              operation_type: 'git',
              path: 'snapshots/orders-{{runtime.run_slug}}.csv',
              branch: 'snapshots',
              message: 'orders snapshot {{runtime.run_slug}}',
            },
          },
        ],
        edges: [{ from: 'orders', to: 'commit' }],
      },
      bindings: { repo: 'repo', warehouse: 'warehouse' },
    });
    const back = await runToEnd(call, 'pg-to-git', { run_slug: 'git-out-1' }, 180_000);
    expect(back, JSON.stringify(back)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(back, 'commit')).toMatchObject({ rows_in: ROWS, rows_out: ROWS });
    expect(commitMessage(repo, 'snapshots')).toBe('orders snapshot git-out-1');
    const lines = showFile(repo, 'snapshots', 'exports/snapshots/orders-git-out-1.csv')
      .toString()
      .split('\n');
    expect(lines[0]).toBe('"id","name","amount","note"');
    expect(lines.length).toBe(ROWS + 2); // header, rows, and the empty string after the last newline
    const ids = new Set(lines.slice(1, -1).map((l) => Number(/^"(\d+)"/.exec(l)?.[1])));
    expect(ids.size).toBe(ROWS);
    expect(lines[1234]).toBe('"1234","name 1234","638.34","a, ""quoted"" note 1234"');
  }, 300_000);

  it('keeps the token and private key out of responses, records and logs', async () => {
    const secrets = [
      TOKEN,
      Buffer.from(`sluice:${TOKEN}`).toString('base64'),
      ssh.passphraseKey.passphrase,
      ...ssh.passphraseKey.privateKey.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----')),
    ];
    const texts: Record<string, string> = {
      dataSources: (await call('GET', `${ORG}/data-sources?limit=100`)).body,
      branches: (await call('GET', `${ORG}/data-sources/bad-token/branches`)).body,
      queries: (await call('GET', `${ORG}/queries?limit=100`)).body,
      executions: (await call('GET', `${ORG}/queries/read/executions?limit=100`)).body,
      runs: JSON.stringify([await getRun(call, 'git-in-1'), await getRun(call, 'git-out-1')]),
      logs: (await call('GET', `${PE}/runs/git-out-1/logs?limit=100`)).body,
      events: (await call('GET', `${ORG}/events?limit=100`)).body,
      store: await dumpStore((q) => t.rt.deps.store.executeSql(q)),
      processLog: t.logs(),
    };
    for (const [where, text] of Object.entries(texts)) {
      for (const s of secrets) expect(text.includes(s), `secret in ${where}`).toBe(false);
    }
    expect(texts.store).toContain('git-out-1');
    expect(texts.logs).toContain('committed exports/snapshots/orders-git-out-1.csv');
  });
});
