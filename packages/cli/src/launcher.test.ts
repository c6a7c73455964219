import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../test/support/cli';

// bin/sluice, the launcher npm links as `sluice` (`npx sluice …`): a shell script that execs node
// with bin/sluice.mjs, adding two start-up options of node for `serve` (a worker keeps node's)
// (docs/benchmarks.md, Memory). Started here through a link, as npm links it; exec means the
// process the caller started is node itself, so its signals and exit code are node's.

const launcher = path.join(repoRoot, 'packages/cli/bin/sluice');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-launcher-'));
const linked = path.join(tmp, '.bin', 'sluice');
fs.mkdirSync(path.dirname(linked));
fs.symlinkSync(path.relative(path.dirname(linked), launcher), linked);

const env = (extra: Record<string, string> = {}) => {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(base))
    if (
      key.startsWith('SLUICE_') ||
      key === 'DATABASE_URL' ||
      key === 'MALLOC_ARENA_MAX' ||
      key === 'NODE_OPTIONS'
    )
      delete base[key];
  return { ...base, SLUICE_LOG_LEVEL: 'warn', SLUICE_CONFIG_DIR: path.join(tmp, 'config'), ...extra };
};

describe('the sluice launcher', () => {
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('runs the CLI through a link and passes its exit code on', () => {
    const version = spawnSync(linked, ['--version'], { env: env(), encoding: 'utf8' });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const unknown = spawnSync(linked, ['no-such-command'], { env: env(), encoding: 'utf8' });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'no-such-command'");
  });

  it('replaces itself with node for serve, with its start-up options, and exits 0 on SIGTERM', async () => {
    const data = path.join(tmp, 'data');
    const child = spawn(linked, ['serve', '--api-addr', '127.0.0.1:0', '--app-addr', '127.0.0.1:0'], {
      env: env({ SLUICE_DATA_DIR: data }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      out += c;
    });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) =>
      child.on('close', (code, signal) => r([code, signal])),
    );
    for (let i = 0; i < 1200 && !out.includes('Sluice is running') && child.exitCode === null; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain('Sluice is running');
    // serve installs its signal handlers in the same turn as it prints that it is running: once
    // it answers a request, they are in place.
    const api = /API host: (\S+)/.exec(out)?.[1];
    expect((await fetch(`${api}/healthz`)).status).toBe(200);

    // The process spawned is node (no shell left waiting), with the options the launcher adds.
    const cmdline = fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
    expect(path.basename(fs.readlinkSync(`/proc/${child.pid}/exe`))).toMatch(/^node/);
    expect(cmdline).toContain('--v8-pool-size=1');
    expect(cmdline.some((a) => a.endsWith('bin/sluice.mjs'))).toBe(true);
    const environ = fs.readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
    expect(environ).toContain('MALLOC_ARENA_MAX=2');

    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
  }, 180_000);
});
