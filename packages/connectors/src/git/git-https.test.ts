import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitHttpsPeer, startGitHttpsPeer } from '../../../../test/peers/git-https';
import { commitFiles, commitMessage, headOf, showFile } from '../../../../test/peers/git-repos';
import { batches, bytesOf, collect, stepContext } from '../../../../test/support/step-context';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { gitConfigSchema, gitCredentialsSchema, gitStatementSchema } from './config';
import { gitConnector } from './index';

// The git connector over HTTPS against `git http-backend` behind a local TLS server with
// Basic auth: test connection and its failures, schema import, saved-query operations,
// pipeline read/write, option injection, redirects, and that the token never leaks.

const TOKEN = `ghp_CanaryToken${Math.random().toString(36).slice(2, 12)}`;
const CSV = 'id,name,qty\n1,"Lovelace, Ada",3\n2,Grace,5\n3,Linus,\n';
const JSON_DOC = JSON.stringify({
  items: [
    { id: 1, tag: 'a', ok: true },
    { id: 2, tag: 'b', price: 2.5 },
  ],
});

describe('git connector over HTTPS', () => {
  let peer: GitHttpsPeer;
  let repo: string;
  let firstCommit: string;
  const savedCa = process.env.GIT_SSL_CAINFO;
  const ctx: ConnectorContext = { policy: { allowPrivate: true }, limits: defaultLimits };
  const messages: string[] = [];

  const conn = (config: Record<string, unknown> = {}, credentials: Record<string, unknown> = {}) => ({
    config: gitConfigSchema.parse({ repo_url: `${peer.url}shop.git`, allow_private_hosts: true, ...config }),
    credentials: gitCredentialsSchema.parse({
      auth_type: 'https',
      username: 'sluice',
      token: TOKEN,
      ...credentials,
    }),
  });
  const fails = async (p: Promise<unknown>, code: string) => {
    const err = await p.then(
      () => null,
      (e) => e,
    );
    expect(err, `expected ${code}`).toBeInstanceOf(ConnectorError);
    messages.push(err.message);
    expect(`${err.code}: ${err.message}`).toMatch(new RegExp(`^${code}:`));
    return err as ConnectorError;
  };
  const exec = (statement: Record<string, unknown>, params: Record<string, unknown> = {}, c = conn()) =>
    gitConnector.query.execute(c, gitStatementSchema.parse({ type: 'git', ...statement }), params, ctx);

  beforeAll(async () => {
    peer = await startGitHttpsPeer({ token: TOKEN });
    // This environment presets GIT_SSL_CAINFO (PEERS.md); git must trust the peer's certificate.
    process.env.GIT_SSL_CAINFO = peer.caFile;
    repo = peer.createRepo('shop');
    firstCommit = commitFiles(repo, 'main', { 'data/orders.csv': 'id\n1\n' });
    commitFiles(repo, 'main', {
      'data/orders.csv': CSV,
      'data/items.json': JSON_DOC,
      'data/notes.txt': 'hello\n',
      'data/events.jsonl': '{"id":1,"tag":"a","ok":true}\n{"id":2,"tag":"b","price":2.5}\n',
      'README.md': '# shop\n',
    });
    commitFiles(repo, 'dev', { 'data/dev.csv': 'a\n1\n' }, 'dev', 'main');
  });

  afterAll(async () => {
    process.env.GIT_SSL_CAINFO = savedCa;
    await peer?.close();
  });

  it('tests a good connection, with default_branch and base_path', async () => {
    await gitConnector.test(conn(), ctx);
    await gitConnector.test(conn({ default_branch: 'dev', base_path: 'data' }), ctx);
  });

  it('maps failures to codes', async () => {
    await fails(gitConnector.test(conn({}, { token: 'wrong-token' }), ctx), 'AUTHENTICATION_FAILED');
    await fails(gitConnector.test(conn({ repo_url: `${peer.url}nope.git` }), ctx), 'NOT_FOUND');
    await fails(gitConnector.test(conn({ default_branch: 'nope' }), ctx), 'NOT_FOUND');
    await fails(gitConnector.test(conn({ base_path: 'nowhere' }), ctx), 'NOT_FOUND');
    await fails(
      gitConnector.test(conn({ repo_url: 'https://no-such-host-sluice.invalid/r.git' }), ctx),
      'HOST_NOT_FOUND',
    );
    await fails(
      gitConnector.test(conn({ allow_private_hosts: false }), { ...ctx, policy: { allowPrivate: false } }),
      'PRIVATE_HOST_BLOCKED',
    );
  });

  it('connects to the address the egress guard checked, not to a second DNS answer', async () => {
    const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const url = `https://git.sluice-test.invalid:${peer.port}/shop.git`;
    // The name exists only in the guard's resolver: git can reach it only through the pin.
    await gitConnector.test(conn({ repo_url: url }), { ...ctx, policy: { allowPrivate: true, lookup } });
    await fails(
      gitConnector.test(conn({ repo_url: url }), { ...ctx, policy: { allowPrivate: false, lookup } }),
      'PRIVATE_HOST_BLOCKED',
    );
  });

  it('refuses plain HTTP and credentials in the URL', () => {
    const r = gitConfigSchema.safeParse({ repo_url: 'http://example.com/r.git' });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain('plain HTTP is not supported');
    expect(gitConfigSchema.safeParse({ repo_url: 'https://u:p@example.com/r.git' }).success).toBe(false);
    expect(gitConfigSchema.safeParse({ repo_url: 'file:///etc/r.git' }).success).toBe(false);
    expect(gitConfigSchema.safeParse({ repo_url: 'ext::sh -c touch% /tmp/pwned' }).success).toBe(false);
  });

  it('does not follow a redirect to another host', async () => {
    peer.createRepo('moved');
    peer.redirect('moved', 'https://localhost:1/elsewhere/');
    const before = peer.requests.length;
    const err = await fails(
      gitConnector.test(conn({ repo_url: `${peer.url}moved.git` }), ctx),
      'REMOTE_ERROR',
    );
    expect(err.message).toContain('redirect, which is not followed');
    expect(peer.requests.slice(before).every((r) => r.url.startsWith('/moved.git/'))).toBe(true);
  });

  it('imports the files under base_path with the fields of CSV and JSON files', async () => {
    const schema = await gitConnector.discover.importSchema(conn({ base_path: 'data' }), ctx);
    expect(schema).toMatchObject({ schema_type: 'file', type: 'git' });
    const files = (schema as any).files;
    expect(files.map((f: any) => f.name).sort()).toEqual([
      'events.jsonl',
      'items.json',
      'notes.txt',
      'orders.csv',
    ]);
    expect(files.find((f: any) => f.name === 'notes.txt')).toMatchObject({
      mime_type: 'text/plain',
      fields: [],
    });
    expect(files.find((f: any) => f.name === 'orders.csv')).toEqual({
      name: 'orders.csv',
      mime_type: 'text/csv',
      resource_id: 'data/orders.csv',
      fields: [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
        { name: 'qty', type: 'integer' },
      ],
    });
    expect(files.find((f: any) => f.name === 'items.json').fields).toEqual([
      { name: 'items', type: 'array' },
    ]);
    expect(files.find((f: any) => f.name === 'events.jsonl').fields).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'tag', type: 'string' },
      { name: 'ok', type: 'boolean' },
      { name: 'price', type: 'number' },
    ]);
  });

  it('lists branches, reads files at a branch or a commit, and writes a commit', async () => {
    const branches = await exec({ operation: 'list_branches' });
    expect(branches).toMatchObject({ result_type: 'git', row_count: 2 });
    expect(branches.payload.branches).toEqual([
      { name: 'dev', is_default: false },
      { name: 'main', is_default: true },
    ]);

    const csv = await exec({ path: 'data/{{file}}' }, { file: 'orders.csv' });
    expect(csv.payload).toMatchObject({
      operation: 'read',
      format: 'csv',
      ref: 'main',
      path: 'data/orders.csv',
      column_names: ['id', 'name', 'qty'],
      rows: [
        ['1', 'Lovelace, Ada', '3'],
        ['2', 'Grace', '5'],
        ['3', 'Linus', null],
      ],
    });
    const old = await exec({ path: 'orders.csv', ref: firstCommit }, {}, conn({ base_path: 'data' }));
    expect(old.payload).toMatchObject({ commit: firstCommit, rows: [['1']] });
    const json = await exec({ path: 'data/items.json', records_path: 'items' });
    expect(json.payload.rows).toEqual(JSON.parse(JSON_DOC).items);
    const raw = await exec({ path: 'data/notes.txt' });
    expect(raw.payload).toMatchObject({
      format: 'file',
      content: 'hello\n',
      file: { mime_type: 'text/plain', size_bytes: 6, digest_algorithm: 'sha256', filename: 'notes.txt' },
    });
    await fails(exec({ path: 'data/missing.csv' }), 'NOT_FOUND');
    await fails(exec({ path: 'data/orders.csv', ref: 'no-such-branch' }), 'NOT_FOUND');

    const written = await exec(
      {
        operation: 'write',
        path: 'out/{{name}}.csv',
        branch: 'main',
        content: [
          { id: 1, v: 'x' },
          { id: 2, v: 'y,z' },
        ],
        message: 'export {{name}}',
      },
      { name: 'report' },
    );
    expect(written.payload).toMatchObject({
      operation: 'write',
      changed: true,
      written_rows: 2,
      ref: 'main',
    });
    expect(headOf(repo, 'main')).toBe(written.payload.commit);
    expect(showFile(repo, 'main', 'out/report.csv').toString()).toBe('"id","v"\n"1","x"\n"2","y,z"\n');
    expect(commitMessage(repo, 'main')).toBe('export report');

    // Writing the same content again commits nothing.
    const again = await exec({
      operation: 'write',
      path: 'out/report.csv',
      content: [
        { id: 1, v: 'x' },
        { id: 2, v: 'y,z' },
      ],
    });
    expect(again.payload).toMatchObject({ changed: false, commit: written.payload.commit });
  });

  it('refuses option-like refs and paths that leave the repository', async () => {
    await fails(
      exec({ path: 'data/orders.csv', ref: '--upload-pack=touch /tmp/pwned' }),
      'INVALID_STATEMENT',
    );
    await fails(exec({ path: 'data/orders.csv', ref: '-h' }), 'INVALID_STATEMENT');
    await fails(exec({ path: '../../etc/passwd' }), 'INVALID_STATEMENT');
    await fails(exec({ path: '.git/config' }), 'INVALID_STATEMENT');
    await fails(exec({ operation: 'write', path: 'x.txt', branch: '-f', content: 'x' }), 'INVALID_STATEMENT');
    await fails(
      gitConnector.query.execute(
        conn(),
        gitStatementSchema.parse({ type: 'git', operation: 'write', path: 'x.txt', content: 'x' }),
        {},
        { ...ctx, readOnly: true },
      ),
      'PERMISSION_DENIED',
    );
  });

  it('streams a CSV file as a pipeline source and commits a payload as a sink', async () => {
    const source = stepContext(
      {
        kind: 'source',
        data_source_ref: 'repo',
        operation: { operation_type: 'git', path: 'data/orders.csv', ref: '{{runtime.input.ref}}' },
      },
      { scope: { runtime: { input: { ref: 'main' } } } },
    );
    const out = await gitConnector.source.read(conn(), source, ctx);
    expect(out.payload).toMatchObject({ kind: 'csv', delimiter: ',', header: true });
    expect((await bytesOf(out.payload)).toString()).toBe(CSV);
    expect(await out.nextCursor()).toBeNull();
    expect(source.counters.bytes_in).toBe(CSV.length);

    const jsonSource = stepContext({
      kind: 'source',
      data_source_ref: 'repo',
      operation: { operation_type: 'git', path: 'items.json', records_path: 'items' },
    });
    const records = await gitConnector.source.read(conn({ base_path: 'data' }), jsonSource, ctx);
    expect((await collect(records.payload)).items).toEqual(JSON.parse(JSON_DOC).items);

    const fileSource = stepContext({
      kind: 'source',
      data_source_ref: 'repo',
      operation: { operation_type: 'git', path: 'README.md' },
    });
    const file = await gitConnector.source.read(conn(), fileSource, ctx);
    expect(file.payload).toMatchObject({ kind: 'file', mimeType: 'text/markdown', filename: 'README.md' });
    expect((await bytesOf(file.payload)).toString()).toBe('# shop\n');

    const sink = stepContext({
      kind: 'sink',
      data_source_ref: 'repo',
      operation: {
        operation_type: 'git',
        path: 'exports/{{runtime.run_slug}}.json',
        branch: 'exports',
        message: 'rows of {{runtime.run_slug}}',
      },
    });
    const rows = {
      kind: 'rows' as const,
      columns: [
        { name: 'id', type: 'int8' },
        { name: 'name', type: 'text' },
      ],
      batches: batches(
        [
          [1, 'a'],
          [2, 'b'],
        ],
        [[3, null]],
      ),
    };
    const res = await gitConnector.sink.write(conn(), rows, sink, ctx);
    expect(res).toEqual({ rows: 3, bytes: expect.any(Number) });
    expect(JSON.parse(showFile(repo, 'exports', 'exports/run-1.json').toString())).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
      { id: 3, name: null },
    ]);
    expect(commitMessage(repo, 'exports')).toBe('rows of run-1');
    // The new branch starts from the default branch.
    expect(showFile(repo, 'exports', 'README.md').toString()).toBe('# shop\n');
  });

  it('streams the whole file to a consumer that starts reading late', async () => {
    // A sink whose module loads on first use starts reading after git has written the blob: the
    // bytes wait for it, whether git is still writing (a file larger than the pipe) or has exited.
    const big = `id,name\n${Array.from({ length: 20_000 }, (_, i) => `${i},name ${i}`).join('\n')}\n`;
    commitFiles(repo, 'late', { 'data/late.csv': big }, 'late', 'main');
    const source = stepContext({
      kind: 'source',
      data_source_ref: 'repo',
      operation: { operation_type: 'git', path: 'data/late.csv', ref: 'late' },
    });
    const out = await gitConnector.source.read(conn(), source, ctx);
    await new Promise((r) => setTimeout(r, 300));
    expect((await bytesOf(out.payload)).toString()).toBe(big);
    expect(source.counters.bytes_in).toBe(big.length);
    // A file that fits the pipe: git has exited before the first read.
    const small = stepContext({
      kind: 'source',
      data_source_ref: 'repo',
      operation: { operation_type: 'git', path: 'data/orders.csv', ref: 'late' },
    });
    const early = await gitConnector.source.read(conn(), small, ctx);
    await new Promise((r) => setTimeout(r, 300));
    expect((await bytesOf(early.payload)).toString()).toBe(CSV);
  });

  it('commits nothing when the upstream payload fails midway', async () => {
    const before = headOf(repo, 'main');
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('a,b\n1,2\n');
      throw new ConnectorError('QUERY_FAILED', 'the upstream source failed');
    }
    const sink = stepContext({
      kind: 'sink',
      data_source_ref: 'repo',
      operation: { operation_type: 'git', path: 'broken.csv' },
    });
    const csv = { kind: 'csv' as const, delimiter: ',', header: true, chunks: broken() };
    const err = await fails(gitConnector.sink.write(conn(), csv, sink, ctx), 'QUERY_FAILED');
    expect(err.message).toBe('the upstream source failed');
    expect(headOf(repo, 'main')).toBe(before);
  });

  it('keeps the token out of every process command line', async () => {
    const fs = await import('node:fs');
    const seen = new Set<string>();
    let running = true;
    const watch = (async () => {
      while (running) {
        for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
          try {
            const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
            if (/\bgit\b|git-remote|ssh/.test(cmd)) seen.add(cmd);
          } catch {
            // gone already
          }
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    try {
      await exec({ operation: 'write', path: 'argv-check.txt', content: `${Date.now()}` });
      await exec({ path: 'data/orders.csv' });
    } finally {
      running = false;
      await watch;
    }
    expect([...seen].some((c) => c.includes('git'))).toBe(true);
    for (const cmd of seen) expect(cmd).not.toContain(TOKEN);
  });

  it('never shows the token, and sends it only as Basic auth', async () => {
    const all = JSON.stringify(messages);
    expect(messages.length).toBeGreaterThan(5);
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(Buffer.from(`sluice:${TOKEN}`).toString('base64'));
    expect(
      peer.requests.some(
        (r) => r.authorization === `Basic ${Buffer.from(`sluice:${TOKEN}`).toString('base64')}`,
      ),
    ).toBe(true);
  });
});
