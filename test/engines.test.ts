import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './support/cli';

// `npm install` warns EBADENGINE when an installed package's `engines.node` excludes the running
// Node. The supported lines (README "On a fresh machine") start at these releases; every package
// the lock file installs must accept each of them, so no supported Node warns.
const LOWEST = ['20.19.0', '22.13.0', '24.0.0'];

// semver is npm's own range grammar (a transitive dependency of the toolchain).
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
};

type Locked = { version?: string; engines?: { node?: string } | string[] };
const read = (file: string) => JSON.parse(fs.readFileSync(path.join(repoRoot, file), 'utf8'));

describe('runtimes', () => {
  it('installs nothing whose engines exclude a supported Node line', () => {
    const lock = read('package-lock.json') as { packages: Record<string, Locked> };
    const refused: string[] = [];
    for (const [where, pkg] of Object.entries(lock.packages)) {
      const range = !Array.isArray(pkg.engines) ? pkg.engines?.node : undefined;
      if (!where || !range) continue;
      for (const v of LOWEST)
        if (!semver.satisfies(v, range)) refused.push(`${where}@${pkg.version} wants ${range}, not ${v}`);
    }
    expect(refused).toEqual([]);
  });

  it('declares the same lines in package.json and the README', () => {
    const range = read('package.json').engines.node as string;
    for (const v of LOWEST) expect(semver.satisfies(v, range), `${v} in ${range}`).toBe(true);
    expect(semver.satisfies('20.18.3', range)).toBe(false);
    expect(fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8')).toContain(
      'Runs on Node.js 20.19+, 22.13+ and 24',
    );
  });
});
