import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

// Debian packages a suite's peer needs (vsftpd, sshd, Swift, Chromium), installed on first use.
// Suites start in parallel and apt allows one process at a time: `apt-get update` fails at once
// on a held lists lock, so every install here runs under one flock, and the packages are checked
// again inside it (the suite that waited finds them installed by the one that held it).

const LOCK = '/tmp/sluice-apt.lock';

function present(files: string[]) {
  return files.every((f) => fs.existsSync(f));
}

function lockedScript(packages: string[], provides: string[]): string[] {
  const script = [
    'set -e',
    `if ${provides.map((f) => `[ -e '${f}' ]`).join(' && ')}; then exit 0; fi`,
    'apt-get -o DPkg::Lock::Timeout=600 update -qq || true',
    `apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends ${packages.join(' ')}`,
  ].join('\n');
  return ['-w', '1200', LOCK, 'sh', '-c', script];
}

const options = {
  env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  maxBuffer: 64 * 1024 * 1024,
};

function check(packages: string[], provides: string[]) {
  if (!present(provides))
    throw new Error(`${packages.join(', ')} installed but ${provides.join(', ')} missing`);
}

/** Installs `packages` unless every file in `provides` exists; waits for other installs. */
export function aptInstallSync(packages: string[], provides: string[]): void {
  if (present(provides)) return;
  execFileSync('flock', lockedScript(packages, provides), { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  check(packages, provides);
}

/** The same without blocking the test worker's event loop (vitest's RPC must keep answering). */
export async function aptInstall(packages: string[], provides: string[]): Promise<void> {
  if (present(provides)) return;
  await promisify(execFile)('flock', lockedScript(packages, provides), options);
  check(packages, provides);
}
