import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, commitMessage, showFile } from '../../../../test/peers/git-repos';
import { type GitSshPeer, startGitSshPeer } from '../../../../test/peers/git-ssh';
import { startSilentTcpServer } from '../../../../test/peers/silent-tcp';
import { bytesOf, chunksOf, stepContext } from '../../../../test/support/step-context';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { gitConfigSchema, gitCredentialsSchema, gitStatementSchema } from './config';
import { gitConnector } from './index';

// The git connector over SSH against Debian's sshd with a git-shell user and key auth: keys
// with and without a passphrase, strict host key checking, failures, read and write, and
// that no part of the private key or passphrase reaches an error.

describe('git connector over SSH', () => {
  let peer: GitSshPeer;
  let repo: string;
  const ctx: ConnectorContext = { policy: { allowPrivate: true }, limits: defaultLimits };
  const messages: string[] = [];

  const conn = (config: Record<string, unknown> = {}, credentials: Record<string, unknown> = {}) => ({
    config: gitConfigSchema.parse({ repo_url: peer.urlOf('data'), allow_private_hosts: true, ...config }),
    credentials: gitCredentialsSchema.parse({
      auth_type: 'ssh',
      ssh_private_key: peer.clientKey.privateKey,
      ssh_known_hosts: peer.knownHosts,
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

  beforeAll(async () => {
    peer = await startGitSshPeer();
    repo = peer.createRepo('data');
    commitFiles(repo, 'main', { 'in/people.csv': 'id,name\n1,Ada\n2,Grace\n' });
  });

  afterAll(async () => {
    await peer?.close();
  });

  it('connects with a key, and with a passphrase-protected key', async () => {
    await gitConnector.test(conn({ base_path: 'in' }), ctx);
    await gitConnector.test(
      conn(
        {},
        { ssh_private_key: peer.passphraseKey.privateKey, ssh_passphrase: peer.passphraseKey.passphrase },
      ),
      ctx,
    );
  });

  it('maps failures to codes', async () => {
    await fails(
      gitConnector.test(
        conn({}, { ssh_private_key: peer.passphraseKey.privateKey, ssh_passphrase: 'wrong' }),
        ctx,
      ),
      'AUTHENTICATION_FAILED',
    );
    const { makeKey } = await import('../../../../test/peers/git-ssh');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const dir = fs.mkdtempSync(`${os.tmpdir()}/git-ssh-stranger-`);
    const stranger = makeKey(dir, 'stranger');
    fs.rmSync(dir, { recursive: true, force: true });
    await fails(
      gitConnector.test(conn({}, { ssh_private_key: stranger.privateKey }), ctx),
      'AUTHENTICATION_FAILED',
    );
    await fails(
      gitConnector.test(conn({}, { ssh_known_hosts: peer.otherKnownHosts }), ctx),
      'HOST_KEY_MISMATCH',
    );
    // A known_hosts line for another name does not vouch for this one either.
    await fails(
      gitConnector.test(
        conn({}, { ssh_known_hosts: peer.knownHosts.replace('[127.0.0.1]', '[localhost]') }),
        ctx,
      ),
      'HOST_KEY_MISMATCH',
    );
    await fails(gitConnector.test(conn({ repo_url: peer.urlOf('missing') }), ctx), 'NOT_FOUND');
    await fails(gitConnector.test(conn({ default_branch: 'nope' }), ctx), 'NOT_FOUND');
    await fails(
      gitConnector.test(conn({ repo_url: 'ssh://git@no-such-host-sluice.invalid/r.git' }), ctx),
      'HOST_NOT_FOUND',
    );
  });

  it('checks the host key under the configured name while connecting to the checked address', async () => {
    const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const repoUrl = peer.urlOf('data').replace('@127.0.0.1:', '@git.sluice-test.invalid:');
    const named = peer.knownHosts.replace('[127.0.0.1]', '[git.sluice-test.invalid]');
    const pinned = { ...ctx, policy: { allowPrivate: true, lookup } };
    await gitConnector.test(conn({ repo_url: repoUrl }, { ssh_known_hosts: named }), pinned);
    // The address's own entry does not vouch for the name.
    await fails(gitConnector.test(conn({ repo_url: repoUrl }), pinned), 'HOST_KEY_MISMATCH');
  });

  it('times out against a server that never sends its banner', async () => {
    const silent = await startSilentTcpServer();
    const saved = process.env.SLUICE_GIT_TIMEOUT_SECONDS;
    process.env.SLUICE_GIT_TIMEOUT_SECONDS = '2';
    try {
      const started = Date.now();
      await fails(
        gitConnector.test(conn({ repo_url: `ssh://git@127.0.0.1:${silent.port}/r.git` }), ctx),
        'TIMEOUT',
      );
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      process.env.SLUICE_GIT_TIMEOUT_SECONDS = saved;
      await silent.close();
    }
  });

  it('reads and writes over SSH (saved query and pipeline)', async () => {
    const exec = (statement: Record<string, unknown>) =>
      gitConnector.query.execute(conn(), gitStatementSchema.parse({ type: 'git', ...statement }), {}, ctx);
    expect((await exec({ operation: 'list_branches' })).payload.branches).toEqual([
      { name: 'main', is_default: true },
    ]);
    expect((await exec({ path: 'in/people.csv' })).payload).toMatchObject({
      column_names: ['id', 'name'],
      rows: [
        ['1', 'Ada'],
        ['2', 'Grace'],
      ],
    });

    const sink = stepContext({
      kind: 'sink',
      data_source_ref: 'repo',
      operation: { operation_type: 'git', path: 'out/copy.csv', message: 'copy' },
    });
    const csv = {
      kind: 'csv' as const,
      delimiter: ',',
      header: true,
      chunks: chunksOf('a,b\n1,"x\ny"\n', '2,z\n'),
    };
    expect(await gitConnector.sink.write(conn(), csv, sink, ctx)).toEqual({ rows: 2, bytes: 16 });
    expect(showFile(repo, 'main', 'out/copy.csv').toString()).toBe('a,b\n1,"x\ny"\n2,z\n');
    expect(commitMessage(repo, 'main')).toBe('copy');

    const source = stepContext({
      kind: 'source',
      data_source_ref: 'repo',
      operation: { operation_type: 'git', path: 'out/copy.csv', format: 'file' },
    });
    const out = await gitConnector.source.read(conn(), source, ctx);
    expect(out.payload).toMatchObject({ kind: 'file', mimeType: 'text/csv', filename: 'copy.csv' });
    expect((await bytesOf(out.payload)).toString()).toBe('a,b\n1,"x\ny"\n2,z\n');
  });

  it('never shows the private key or passphrase', () => {
    const all = JSON.stringify(messages);
    expect(messages.length).toBeGreaterThan(5);
    for (const secret of [
      peer.passphraseKey.passphrase,
      peer.clientKey.privateKey,
      peer.passphraseKey.privateKey,
    ]) {
      for (const line of secret.split('\n').filter((l) => l.length > 20)) expect(all).not.toContain(line);
    }
    expect(all).not.toContain('PRIVATE KEY');
  });
});
