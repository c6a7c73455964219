import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { compiledBuildIsFresh } from '../bin/fresh.mjs';

// bin/sluice.mjs runs the compiled build only while it matches the sources it was built from.
describe('compiled build freshness', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  function cliDir(): { dir: string; url: URL; record(): void } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-fresh-'));
    dirs.push(dir);
    fs.mkdirSync(path.join(dir, 'src'));
    fs.mkdirSync(path.join(dir, 'dist'));
    fs.writeFileSync(path.join(dir, 'src/main.ts'), 'export const a = 1;\n');
    const record = () => {
      const st = fs.statSync(path.join(dir, 'src/main.ts'));
      const inputs = { 'src/main.ts': [st.size, Math.trunc(st.mtimeMs)] };
      fs.writeFileSync(path.join(dir, 'dist/inputs.json'), JSON.stringify(inputs));
    };
    return { dir, url: pathToFileURL(`${dir}/`), record };
  }

  it('is fresh while every input keeps its size and modification time', () => {
    const c = cliDir();
    c.record();
    expect(compiledBuildIsFresh(c.url)).toBe(true);
  });

  it('is stale after an input changes, disappears, or without a build', () => {
    const c = cliDir();
    expect(compiledBuildIsFresh(c.url)).toBe(false);
    c.record();
    const later = new Date(Date.now() + 5_000);
    fs.utimesSync(path.join(c.dir, 'src/main.ts'), later, later);
    expect(compiledBuildIsFresh(c.url)).toBe(false);
    c.record();
    fs.rmSync(path.join(c.dir, 'src/main.ts'));
    expect(compiledBuildIsFresh(c.url)).toBe(false);
  });
});
