// git over SSH for git-connector tests: Debian's OpenSSH sshd on a random loopback port, one
// system user whose login shell is git-shell (so a key opens git-upload-pack/receive-pack and
// nothing else), key authentication only. Installs openssh-server when it is missing.
// `knownHosts` is the line that pins the server's host key; `otherKnownHosts` pins a key the
// server does not have (the wrong-host-key case).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { aptInstallSync } from '../support/apt';
import { freePort } from '../support/free-port';
import { createBareRepo } from './git-repos';

const SSHD = '/usr/sbin/sshd';
const USER = 'sluicegitpeer';

export type SshKey = { privateKey: string; publicKey: string };

export type GitSshPeer = {
  port: number;
  user: string;
  root: string;
  knownHosts: string;
  otherKnownHosts: string;
  /** A client key the server accepts. */
  clientKey: SshKey;
  /** A client key protected by `passphrase`, also accepted. */
  passphraseKey: SshKey & { passphrase: string };
  /** ssh://USER@127.0.0.1:PORT/<root>/<name>.git */
  urlOf(name: string): string;
  createRepo(name: string): string;
  close(): Promise<void>;
};

function run(cmd: string, args: string[]) {
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8');
}

export function ensureSshd() {
  aptInstallSync(['openssh-server'], [SSHD]);
}

/** Retries a command that may meet another suite's lock on /etc/passwd or /etc/shadow. */
function withRetry(fn: () => void) {
  for (let attempt = 1; ; attempt++) {
    try {
      fn();
      return;
    } catch (err) {
      if (attempt >= 20) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

function ensureUser() {
  withRetry(() => {
    try {
      run('id', ['-u', USER]);
    } catch {
      run('useradd', ['--system', '--create-home', '--shell', '/usr/bin/git-shell', USER]);
    }
  });
  // Repositories belong to root (seeded by the tests); git-shell's git must trust them.
  const home = run('getent', ['passwd', USER]).split(':')[5];
  fs.mkdirSync(home, { recursive: true });
  const gitconfig = path.join(home, '.gitconfig');
  const trustAll = '[safe]\n\tdirectory = *\n';
  // Written once: a running git-shell session of another suite may be reading it.
  if (!fs.existsSync(gitconfig) || fs.readFileSync(gitconfig, 'utf8') !== trustAll)
    fs.writeFileSync(gitconfig, trustAll);
  // A user without a password is "locked", and sshd refuses locked users under UsePAM no.
  if (run('getent', ['shadow', USER]).split(':')[1] !== '*')
    withRetry(() => run('usermod', ['-p', '*', USER]));
}

export function makeKey(dir: string, name: string, passphrase = ''): SshKey {
  const file = path.join(dir, name);
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', name, '-f', file]);
  return {
    privateKey: fs.readFileSync(file, 'utf8'),
    publicKey: fs.readFileSync(`${file}.pub`, 'utf8').trim(),
  };
}

async function waitForPort(port: number, ms: number, exited: () => string | null) {
  const until = Date.now() + ms;
  for (;;) {
    const why = exited();
    if (why !== null) throw new Error(`sshd exited: ${why}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`sshd did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startSshd(dir: string, authorized: string) {
  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  fs.writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(dir, 'host_ed25519')}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorized}`,
      'AuthenticationMethods publickey',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'PermitRootLogin no',
      `AllowUsers ${USER}`,
      'AllowTcpForwarding no',
      'X11Forwarding no',
      'PrintMotd no',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  const sshd = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exit: string | null = null;
  sshd.stderr.on('data', (c) => {
    stderr += c.toString();
  });
  sshd.on('exit', (code, sig) => {
    exit = `${code ?? sig} ${stderr.trim()}`;
  });
  try {
    await waitForPort(port, 15_000, () => exit);
    if (exit !== null) throw new Error(`sshd exited: ${exit}`);
  } catch (err) {
    sshd.kill('SIGKILL');
    throw err;
  }
  return { port, sshd, exited: () => exit };
}

export async function startGitSshPeer(): Promise<GitSshPeer> {
  ensureSshd();
  ensureUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'git-ssh-peer-'));
  // The git user must reach the repositories and its authorized keys (StrictModes is off).
  fs.chmodSync(dir, 0o755);
  const repos = path.join(dir, 'repos');
  fs.mkdirSync(repos, { mode: 0o755 });
  const hostKey = makeKey(dir, 'host_ed25519');
  const wrongHost = makeKey(dir, 'other_host_ed25519');
  const clientKey = makeKey(dir, 'client');
  const passphrase = 'peer passphrase 42';
  const passphraseKey = { ...makeKey(dir, 'client_pp', passphrase), passphrase };
  const authorized = path.join(dir, 'authorized_keys');
  fs.writeFileSync(authorized, `${clientKey.publicKey}\n${passphraseKey.publicKey}\n`, { mode: 0o644 });
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  // A free port can be taken again before sshd binds it: try another one then.
  let started: Awaited<ReturnType<typeof startSshd>> | null = null;
  for (let attempt = 1; !started; attempt++) {
    try {
      started = await startSshd(dir, authorized);
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
  const { port, sshd, exited } = started;
  const pinned = (key: SshKey) => `[127.0.0.1]:${port} ${key.publicKey.split(' ').slice(0, 2).join(' ')}`;
  const peer: GitSshPeer = {
    port,
    user: USER,
    root: repos,
    knownHosts: pinned(hostKey),
    otherKnownHosts: pinned(wrongHost),
    clientKey,
    passphraseKey,
    urlOf: (name) => `ssh://${USER}@127.0.0.1:${port}${repos}/${name}.git`,
    createRepo: (name) => createBareRepo(repos, name),
    close: async () => {
      if (exited() === null) {
        const gone = new Promise((r) => sshd.once('exit', r));
        sshd.kill('SIGTERM');
        await gone;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return peer;
}
