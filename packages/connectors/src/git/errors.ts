import { ConnectorError } from '../types';

// git's stderr turned into a stored, user-facing error: a code by what happened and a message
// of our own words. Only git's own "fatal:"/"error:" line (scrubbed, shortened) is ever
// quoted; what the server says ("remote: …") never is.

/** Removes secrets, temp paths, URL credentials and key blocks from git's output. */
export function scrub(text: string, secrets: string[]): string {
  let out = text.replace(/-----BEGIN [^-]*-----[\s\S]*?(-----END [^-]*-----|$)/g, '[key]');
  for (const s of secrets) {
    if (!s) continue;
    out = out.split(s).join('****');
    // Keys also appear line by line, and tokens base64-encoded in headers.
    for (const line of s.split('\n')) if (line.trim().length >= 8) out = out.split(line.trim()).join('****');
  }
  out = out.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s'"]*@/gi, '$1');
  out = out.replace(/authorization:[^\n]*/gi, 'authorization: ****');
  return out;
}

/** git's own complaint: its last fatal/error line, shortened, without server text. */
function gitLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^(fatal|error):/.test(l));
  const line = lines.at(-1) ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we remove
  return line.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 300);
}

export function classifyGitError(stderr: string, o: { host: string; what?: string }): ConnectorError {
  const s = stderr.toLowerCase();
  const on = o.what ? ` (${o.what})` : '';
  const has = (...needles: string[]) => needles.some((n) => s.includes(n));
  if (has('host key verification failed', 'remote host identification has changed', 'host key is known'))
    return new ConnectorError(
      'HOST_KEY_MISMATCH',
      `the SSH host key of ${o.host} is not the one ssh_known_hosts pins: check ssh_known_hosts`,
    );
  if (has('could not resolve host', 'could not resolve hostname', 'name or service not known'))
    return new ConnectorError('HOST_NOT_FOUND', `the host ${o.host} does not resolve: check repo_url`);
  if (
    has(
      'permission denied (publickey',
      'authentication failed',
      'could not read username',
      'could not read password',
      'returned error: 401',
      'incorrect passphrase',
      'load key',
      'invalid format',
      'too many authentication failures',
    )
  )
    return new ConnectorError('AUTHENTICATION_FAILED', `${o.host} refused the credentials${on}`);
  if (has('returned error: 403'))
    return new ConnectorError('PERMISSION_DENIED', `${o.host} denied access to the repository${on}`);
  if (has('timed out', 'timeout'))
    return new ConnectorError('TIMEOUT', `${o.host} did not answer in time${on}`);
  if (
    has('repository not found', 'does not appear to be a git repository', 'returned error: 404', 'not found')
  )
    return new ConnectorError('NOT_FOUND', `the repository was not found on ${o.host}: check repo_url${on}`);
  if (has("couldn't find remote ref"))
    return new ConnectorError('NOT_FOUND', `the branch or commit was not found${on}`);
  if (has('non-fast-forward', '[rejected]', 'fetch first', 'stale info'))
    return new ConnectorError('REMOTE_ERROR', `the branch moved while Sluice was committing; run again${on}`);
  if (has('[remote rejected]', 'pre-receive hook declined', 'protected branch'))
    return new ConnectorError('PERMISSION_DENIED', `${o.host} refused the push${on}`);
  if (has('ssl certificate problem', 'server certificate verification failed', 'certificate verify failed'))
    return new ConnectorError(
      'CONNECTION_FAILED',
      `the TLS certificate of ${o.host} could not be verified${on}`,
    );
  if (
    has(
      'redirect',
      'returned error: 301',
      'returned error: 302',
      'returned error: 303',
      'returned error: 307',
      'returned error: 308',
    )
  )
    return new ConnectorError(
      'REMOTE_ERROR',
      `${o.host} answered with a redirect, which is not followed${on}`,
    );
  if (
    has(
      'connection refused',
      'failed to connect',
      'connection closed',
      'connection reset',
      'no route to host',
    )
  )
    return new ConnectorError('CONNECTION_FAILED', `could not connect to ${o.host}${on}`);
  const line = gitLine(stderr);
  return new ConnectorError('REMOTE_ERROR', `git failed${on}${line ? `: ${line}` : ''}`);
}
