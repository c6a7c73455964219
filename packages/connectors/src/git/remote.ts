import path from 'node:path/posix';
import { EgressBlockedError, type EgressPolicy, resolveAllowed } from '../egress';
import { ConnectorError } from '../types';

// What the connector needs to know about `repo_url`, and the checks on every name a user can
// put on git's command line (refs, paths): nothing may look like an option, leave base_path
// or reach into .git.

export type Remote = {
  protocol: 'https' | 'ssh';
  host: string;
  port: number;
  /** The URL as configured (no credentials: the config schema refuses them). */
  url: string;
  /** ssh: the login user of the URL (`git` of git@host:repo), if any. */
  user: string | null;
  /** ssh: the path part, as git sends it to the server. */
  repoPath: string;
  /** ssh:// form (scp-like URLs keep their relative path). */
  scpLike: boolean;
};

const SCP_LIKE = /^([A-Za-z0-9._-]+)@([A-Za-z0-9.-]+):(?!\/\/)(.+)$/;
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/;
const USER = /^[A-Za-z0-9._][A-Za-z0-9._-]*$/;

const bad = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

export function parseRemote(repoUrl: string): Remote {
  const scp = SCP_LIKE.exec(repoUrl);
  let r: Remote;
  if (scp) {
    r = {
      protocol: 'ssh',
      user: scp[1],
      host: scp[2],
      port: 22,
      url: repoUrl,
      repoPath: scp[3],
      scpLike: true,
    };
  } else {
    let u: URL;
    try {
      u = new URL(repoUrl);
    } catch {
      throw bad('repo_url is not a URL');
    }
    if (u.protocol === 'http:')
      throw bad('repo_url uses plain HTTP, which is not supported: use https:// or ssh://');
    if (u.protocol !== 'https:' && u.protocol !== 'ssh:')
      throw bad('repo_url must be an https:// or ssh:// URL (or user@host:path)');
    if (u.password) throw bad('repo_url must not contain a password; put credentials in credentials');
    const https = u.protocol === 'https:';
    r = {
      protocol: https ? 'https' : 'ssh',
      user: u.username ? decodeURIComponent(u.username) : null,
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: u.port ? Number(u.port) : https ? 443 : 22,
      url: repoUrl,
      repoPath: decodeURIComponent(u.pathname),
      scpLike: false,
    };
    if (u.search || u.hash) throw bad('repo_url must not have a query or fragment');
  }
  const ipv6 = r.host.includes(':');
  if (!(ipv6 ? /^[0-9A-Fa-f:.]+$/.test(r.host) : HOST.test(r.host)))
    throw bad('repo_url has an invalid host name');
  if (r.user !== null && !USER.test(r.user)) throw bad('repo_url has an invalid user name');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
  if (/[\u0000-\u001f\u007f\s'"\\]/.test(r.repoPath) || r.repoPath.startsWith('-'))
    throw bad('repo_url has an invalid repository path');
  return r;
}

/**
 * Resolves the remote's host through the egress guard; git is then pinned to this address
 * (curl's resolve list, ssh's target with HostKeyAlias), so DNS cannot change it in between.
 */
export async function resolveRemote(remote: Remote, policy: EgressPolicy): Promise<string> {
  try {
    return (await resolveAllowed(remote.host, policy)).address;
  } catch (err) {
    if (err instanceof EgressBlockedError) throw new ConnectorError('PRIVATE_HOST_BLOCKED', err.message);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_NODATA')
      throw new ConnectorError('HOST_NOT_FOUND', `the host ${remote.host} does not resolve: check repo_url`);
    throw new ConnectorError('CONNECTION_FAILED', `the host ${remote.host} could not be resolved`);
  }
}

const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** True for a full commit id (SHA-1 or SHA-256). */
export const isCommitId = (ref: string) => COMMIT.test(ref);

/** A branch name as `git check-ref-format --branch` would take it, and never option-like. */
export function checkBranch(name: string, what = 'branch'): string {
  const ok =
    name.length > 0 &&
    name.length <= 255 &&
    !name.startsWith('-') &&
    !name.startsWith('/') &&
    !name.endsWith('/') &&
    !name.endsWith('.') &&
    !name.endsWith('.lock') &&
    !name.includes('..') &&
    !name.includes('//') &&
    !name.includes('@{') &&
    name !== '@' &&
    !name.split('/').some((part) => part.startsWith('.')) &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
    !/[\u0000-\u0020\u007f~^:?*[\\]/.test(name);
  if (!ok) throw bad(`${what} ${JSON.stringify(name.slice(0, 100))} is not a valid branch name`);
  return name;
}

/** A branch or a full commit id. */
export function checkRef(ref: string): { kind: 'branch' | 'commit'; name: string } {
  const name = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref;
  if (isCommitId(name)) return { kind: 'commit', name };
  return { kind: 'branch', name: checkBranch(name, 'ref') };
}

/** base_path + path, normalized; never outside the repository, never into .git. */
export function repoPath(basePath: string | undefined, file: string | undefined): string {
  const joined = path.normalize(`/${basePath ?? ''}/${file ?? ''}`);
  const rel = joined.replace(/^\/+/, '').replace(/\/+$/, '');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
  if (/[\u0000-\u001f\u007f\\]/.test(rel)) throw bad('the path contains control characters or backslashes');
  const parts = rel.split('/');
  if (`/${basePath ?? ''}/${file ?? ''}`.split('/').includes('..'))
    throw bad('the path must not contain .. segments');
  if (parts.some((p) => p.toLowerCase() === '.git')) throw bad('the path must not reach into .git');
  return rel;
}
