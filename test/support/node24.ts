import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './cli';

const run = promisify(execFile);

/** Where the npm registry's `node@24` package is installed for the smoke suite (gitignored). */
export const NODE24_DIR = path.join(repoRoot, '.tmp', 'node24');
const binOf = (dir: string) => path.join(dir, 'node_modules', 'node', 'bin', 'node');

async function versionOf(bin: string): Promise<string | null> {
  if (!fs.existsSync(bin)) return null;
  try {
    return (await run(bin, ['--version'])).stdout.trim();
  } catch {
    return null;
  }
}

/**
 * A Node.js 24 binary from the npm registry's `node` package (its install step fetches the
 * platform build `node-<os>-<arch>` from the same registry, so nothing comes from elsewhere).
 * Installed once into .tmp/node24 and reused; a fresh install goes to a scratch directory first
 * and is moved into place whole, so two suites starting together never see half of one.
 */
export async function node24(): Promise<string> {
  const bin = binOf(NODE24_DIR);
  if ((await versionOf(bin))?.startsWith('v24.')) return bin;
  const scratch = `${NODE24_DIR}.${process.pid}`;
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(scratch, { recursive: true });
  fs.writeFileSync(path.join(scratch, 'package.json'), '{"name":"sluice-node24","private":true}\n');
  await run('npm', ['install', 'node@24', '--no-audit', '--no-fund', '--no-save', '--loglevel=error'], {
    cwd: scratch,
    env: { ...process.env, npm_config_workspaces: 'false' },
    maxBuffer: 16 * 1024 * 1024,
  });
  const version = await versionOf(binOf(scratch));
  if (!version?.startsWith('v24.')) throw new Error(`npm install node@24 gave ${version ?? 'no binary'}`);
  fs.rmSync(NODE24_DIR, { recursive: true, force: true });
  try {
    fs.renameSync(scratch, NODE24_DIR);
  } catch {
    // Another suite moved its copy into place first: use that one.
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return bin;
}
