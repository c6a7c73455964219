import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ConnectorContext, ConnectorError } from '../types';
import type { GitConfig, GitCredentials } from './config';
import { classifyGitError, scrub } from './errors';
import { parseRemote, type Remote, resolveRemote } from './remote';

// The git CLI in a sealed room: a private temp HOME and no system or global config, only the
// remote's own protocol allowed, no prompts, no redirects, no submodules, the host pinned to
// the address the egress guard checked, and strict SSH host key checking against the
// configured known_hosts. Secrets reach git through files (0600) and environment variables
// of the child only, never its argv; stderr is scrubbed before any message is built from it.

export type GitConn = { config: GitConfig; credentials: GitCredentials | null };

/** Idle/connect timeout of network commands; operators can change it (docs/connectors/git.md). */
export function timeoutSeconds(): number {
  const v = Number(process.env.SLUICE_GIT_TIMEOUT_SECONDS);
  return Number.isFinite(v) && v >= 1 && v <= 600 ? v : 30;
}

// Variables an operator sets for private CAs; everything else of our environment stays out.
const PASSED_THROUGH = ['PATH', 'GIT_SSL_CAINFO', 'GIT_SSL_CAPATH', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'TZ'];

export type RunOptions = {
  /** Bytes for stdin: a string, a buffer or a stream (hash-object of a payload). */
  input?: string | Buffer | AsyncIterable<Uint8Array>;
  /** A network command: idle timeout applies and failures are classified as remote errors. */
  network?: boolean;
  env?: Record<string, string>;
  /** What the command was for, in messages ("read docs/a.csv at main"). */
  what?: string;
};

export type StreamedOutput = { stdout: AsyncIterable<Buffer>; kill(): void };

export class GitSession {
  readonly repo: string;
  private secretsGone = false;
  private closed = false;
  private readonly children = new Set<ChildProcess>();

  private constructor(
    readonly dir: string,
    readonly remote: Remote,
    private readonly env: NodeJS.ProcessEnv,
    private readonly secrets: string[],
    private readonly signal: AbortSignal | undefined,
  ) {
    this.repo = path.join(dir, 'repo.git');
  }

  static async open(conn: GitConn, ctx: ConnectorContext): Promise<GitSession> {
    const remote = parseRemote(conn.config.repo_url);
    const creds = conn.credentials;
    if (creds && creds.auth_type !== remote.protocol) {
      throw new ConnectorError(
        'INVALID_STATEMENT',
        `credentials of auth_type ${creds.auth_type} do not fit a ${remote.protocol} repo_url`,
      );
    }
    if (remote.protocol === 'ssh' && creds?.auth_type !== 'ssh') {
      throw new ConnectorError(
        'AUTHENTICATION_FAILED',
        'an SSH repo_url needs ssh credentials with ssh_known_hosts',
      );
    }
    const address = await resolveRemote(remote, ctx.policy);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sluice-git-'));
    try {
      await fs.chmod(dir, 0o700);
      const home = path.join(dir, 'home');
      await fs.mkdir(home, { mode: 0o700 });
      const secrets: string[] = [];
      const config: [string, string][] = [
        ['protocol.allow', 'never'],
        [`protocol.${remote.protocol}.allow`, 'always'],
        ['core.hooksPath', '/dev/null'],
        ['core.fsmonitor', 'false'],
        ['core.askPass', ''],
        ['credential.helper', ''],
        ['submodule.recurse', 'false'],
        ['fetch.recurseSubmodules', 'false'],
        ['push.recurseSubmodules', 'no'],
        ['gc.auto', '0'],
        ['maintenance.auto', 'false'],
        ['init.defaultBranch', 'main'],
        ['advice.detachedHead', 'false'],
        ['http.followRedirects', 'false'],
        ['http.proxy', ''],
        ['http.sslVerify', 'true'],
        ['http.lowSpeedLimit', '1'],
        ['http.lowSpeedTime', String(timeoutSeconds())],
        ['remote.origin.url', remoteUrlFor(remote, address)],
      ];
      const env: NodeJS.ProcessEnv = {};
      for (const k of PASSED_THROUGH) if (process.env[k] !== undefined) env[k] = process.env[k];
      Object.assign(env, {
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, '.config'),
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_TERMINAL_PROMPT: '0',
        GIT_ALLOW_PROTOCOL: remote.protocol,
        GIT_PROTOCOL_FROM_USER: '0',
        GIT_AUTHOR_NAME: 'Sluice',
        GIT_AUTHOR_EMAIL: 'sluice@localhost',
        GIT_COMMITTER_NAME: 'Sluice',
        GIT_COMMITTER_EMAIL: 'sluice@localhost',
        LC_ALL: 'C',
        LANG: 'C',
      });

      if (remote.protocol === 'https') {
        const ip = address.includes(':') ? `[${address}]` : address;
        config.push(['http.curloptResolve', `${remote.host}:${remote.port}:${ip}`]);
        if (creds?.auth_type === 'https' && creds.token) {
          const username = creds.username ?? remote.user ?? 'git';
          if (/[\r\n\0]/.test(username) || /[\r\n\0]/.test(creds.token))
            throw new ConnectorError('AUTHENTICATION_FAILED', 'the username or token contains a line break');
          secrets.push(creds.token);
          env.SLUICE_GIT_USERNAME = username;
          env.SLUICE_GIT_TOKEN = creds.token;
          // The helper reads the values from its environment: they are never in any argv.
          config.push([
            'credential.helper',
            '!f() { test "$1" = get && printf \'username=%s\\npassword=%s\\n\' "$SLUICE_GIT_USERNAME" "$SLUICE_GIT_TOKEN"; }; f',
          ]);
        }
      } else if (creds?.auth_type === 'ssh') {
        const keyFile = path.join(dir, 'id_key');
        const knownHosts = path.join(dir, 'known_hosts');
        const askpass = path.join(dir, 'askpass.sh');
        await fs.writeFile(keyFile, `${creds.ssh_private_key.replace(/\r\n/g, '\n').trim()}\n`, {
          mode: 0o600,
        });
        await fs.writeFile(knownHosts, `${creds.ssh_known_hosts.replace(/\r\n/g, '\n').trim()}\n`, {
          mode: 0o600,
        });
        await fs.writeFile(askpass, '#!/bin/sh\nprintf \'%s\\n\' "$SLUICE_GIT_PASSPHRASE"\n', {
          mode: 0o700,
        });
        secrets.push(creds.ssh_private_key);
        if (creds.ssh_passphrase) secrets.push(creds.ssh_passphrase);
        env.SLUICE_GIT_PASSPHRASE = creds.ssh_passphrase ?? '';
        env.SSH_ASKPASS = askpass;
        env.SSH_ASKPASS_REQUIRE = 'force';
        env.DISPLAY = ':0';
        const t = timeoutSeconds();
        // The key is looked up under the configured host name (and port), not the pinned address.
        const alias = remote.port === 22 ? remote.host : `[${remote.host}]:${remote.port}`;
        const opts = [
          '-F /dev/null',
          `-i ${shellQuote(keyFile)}`,
          '-o IdentitiesOnly=yes',
          '-o IdentityAgent=none',
          '-o StrictHostKeyChecking=yes',
          `-o UserKnownHostsFile=${shellQuote(knownHosts)}`,
          '-o GlobalKnownHostsFile=/dev/null',
          `-o HostKeyAlias=${shellQuote(alias)}`,
          '-o CheckHostIP=no',
          '-o UpdateHostKeys=no',
          '-o PasswordAuthentication=no',
          '-o KbdInteractiveAuthentication=no',
          '-o PreferredAuthentications=publickey',
          '-o ForwardAgent=no',
          '-o ForwardX11=no',
          '-o ClearAllForwardings=yes',
          '-o PermitLocalCommand=no',
          '-o ProxyCommand=none',
          '-o ProxyJump=none',
          `-o ConnectTimeout=${t}`,
          `-o ServerAliveInterval=${t}`,
          '-o ServerAliveCountMax=2',
          '-o LogLevel=ERROR',
        ];
        env.GIT_SSH_COMMAND = `ssh ${opts.join(' ')}`;
        env.GIT_SSH_VARIANT = 'ssh';
      }
      env.GIT_CONFIG_COUNT = String(config.length);
      config.forEach(([k, v], i) => {
        env[`GIT_CONFIG_KEY_${i}`] = k;
        env[`GIT_CONFIG_VALUE_${i}`] = v;
      });
      const session = new GitSession(dir, remote, env, secrets, ctx.signal);
      await session.run(['init', '-q', '--bare', session.repo], { what: 'prepare a local repository' });
      env.GIT_DIR = session.repo;
      // User paths are names, never pathspec magic.
      env.GIT_LITERAL_PATHSPECS = '1';
      return session;
    } catch (err) {
      await fs.rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Removes the key files once no more network commands follow. */
  async dropSecrets(): Promise<void> {
    if (this.secretsGone) return;
    this.secretsGone = true;
    await Promise.all(
      ['id_key', 'known_hosts', 'askpass.sh'].map((f) => fs.rm(path.join(this.dir, f), { force: true })),
    );
    for (const k of ['SLUICE_GIT_TOKEN', 'SLUICE_GIT_PASSPHRASE', 'SLUICE_GIT_USERNAME']) delete this.env[k];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.children) killGroup(c);
    await fs.rm(this.dir, { recursive: true, force: true });
  }

  private spawn(args: string[], extraEnv?: Record<string, string>): ChildProcess {
    if (this.closed) throw new Error('git session is closed');
    const child = spawn('git', args, {
      cwd: this.dir,
      env: { ...this.env, ...extraEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
      // A session of its own: ssh finds no terminal to prompt on, and a kill takes the group.
      detached: true,
    });
    this.children.add(child);
    child.on('close', () => this.children.delete(child));
    return child;
  }

  /** Runs git in the session's repository; resolves with stdout, throws a ConnectorError. */
  async run(args: string[], opts: RunOptions = {}): Promise<Buffer> {
    const child = this.spawn(args, opts.env);
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    const outcome = this.supervise(child, opts, (c) => {
      err = (err + c.toString('utf8')).slice(-64 * 1024);
    });
    // A failing upstream must not leave a truncated blob behind: its error wins.
    let inputError: unknown = null;
    const fed = feed(child, opts.input).catch((e) => {
      inputError = e;
      killGroup(child);
    });
    const { code, timedOut, aborted } = await outcome;
    await fed;
    if (inputError) throw inputError;
    if (code !== 0) throw this.failure(err, { timedOut, aborted, what: opts.what, network: opts.network });
    return Buffer.concat(out);
  }

  /** Runs a local git command whose stdout is streamed (cat-file of a large blob). */
  stream(args: string[], what: string): StreamedOutput {
    const child = this.spawn(args);
    let err = '';
    const outcome = this.supervise(child, {}, (c) => {
      err = (err + c.toString('utf8')).slice(-64 * 1024);
    });
    child.stdin!.end();
    // Node resumes, and so discards, a child's stdout that nobody listens to once the child has
    // exited (a blob small enough for the pipe's buffer exits before a consumer that loads its
    // module on first use starts reading). A 'readable' listener keeps the bytes buffered until
    // the consumer reads them; the reading below is paced by the consumer as before.
    child.stdout!.on('readable', () => {});
    // Settled when the stream is read; a stream nobody reads must not leave a rejection behind.
    outcome.catch(() => {});
    const self = this;
    async function* stdout(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of child.stdout!) yield chunk as Buffer;
        const { code, aborted } = await outcome;
        if (code !== 0) throw self.failure(err, { timedOut: false, aborted, what });
      } finally {
        if (child.exitCode === null) killGroup(child);
      }
    }
    return { stdout: stdout(), kill: () => killGroup(child) };
  }

  private supervise(
    child: ChildProcess,
    opts: RunOptions,
    onErr: (chunk: Buffer) => void,
  ): Promise<{ code: number | null; timedOut: boolean; aborted: boolean }> {
    let timedOut = false;
    let aborted = false;
    let timer: NodeJS.Timeout | undefined;
    const idleMs = timeoutSeconds() * 1000;
    // Network commands must show life (progress on stderr, data on stdout) within the timeout.
    const arm = () => {
      if (!opts.network) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        killGroup(child);
      }, idleMs);
    };
    arm();
    // Only a network command's stdout is watched here, and `run` reads that one anyway. A 'data'
    // listener puts a stream into flowing mode: on `stream`'s stdout, every chunk that came before
    // the consumer's first read would go to this listener alone and be lost.
    if (opts.network) child.stdout!.on('data', arm);
    child.stderr!.on('data', (c: Buffer) => {
      arm();
      onErr(c);
    });
    const onAbort = () => {
      aborted = true;
      killGroup(child);
    };
    this.signal?.addEventListener('abort', onAbort, { once: true });
    if (this.signal?.aborted) onAbort();
    return new Promise((resolve, reject) => {
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new ConnectorError('CONNECTION_FAILED', `git could not be started: ${(e as Error).message}`));
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        this.signal?.removeEventListener('abort', onAbort);
        resolve({ code, timedOut, aborted });
      });
    });
  }

  failure(
    stderr: string,
    o: { timedOut: boolean; aborted: boolean; what?: string; network?: boolean },
  ): ConnectorError {
    const host = this.remote.host;
    if (o.aborted) return new ConnectorError('QUERY_FAILED', 'the git operation was canceled');
    if (o.timedOut)
      return new ConnectorError('TIMEOUT', `${host} did not answer within ${timeoutSeconds()} s`);
    return classifyGitError(scrub(stderr, [...this.secrets, this.dir]), { host, what: o.what });
  }
}

function killGroup(child: ChildProcess) {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

async function feed(child: ChildProcess, input: RunOptions['input']): Promise<void> {
  const stdin = child.stdin!;
  stdin.on('error', () => {});
  if (input === undefined) {
    stdin.end();
    return;
  }
  if (typeof input === 'string' || Buffer.isBuffer(input)) {
    stdin.end(input);
    return;
  }
  let closed = false;
  child.once('close', () => {
    closed = true;
    stdin.emit('drain');
  });
  for await (const chunk of input) {
    if (closed || stdin.destroyed) throw new ConnectorError('QUERY_FAILED', 'git stopped reading its input');
    if (!stdin.write(chunk)) await new Promise((r) => stdin.once('drain', r));
  }
  stdin.end();
}

/** Single-quotes for the shell git runs GIT_SSH_COMMAND with; our values never hold a quote. */
function shellQuote(v: string): string {
  if (v.includes("'")) throw new Error('unexpected quote in a path');
  return `'${v}'`;
}

/** The URL git connects to: the checked address in place of the name. */
function remoteUrlFor(r: Remote, address: string): string {
  if (r.protocol === 'https') return r.url; // pinned by http.curloptResolve instead
  const host = address.includes(':') ? `[${address}]` : address;
  const user = r.user ? `${r.user}@` : '';
  if (r.scpLike) return `${user}${host}:${r.repoPath}`;
  return `ssh://${user}${host}:${r.port}${r.repoPath.startsWith('/') ? '' : '/'}${r.repoPath}`;
}
