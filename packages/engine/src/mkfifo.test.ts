import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkfifo, pipeMakerPid, startPipeMaker } from './mkfifo';

const isFifo = async (path: string) => (await lstat(path)).isFIFO();

describe("named pipes made by a shell of the process's own", () => {
  let root = '';
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-mkfifo-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('makes pipes whose names a shell would read otherwise, all through one shell', async () => {
    startPipeMaker();
    const pid = pipeMakerPid();
    expect(pid).toBeGreaterThan(0);
    const names = [
      'plain.pipe',
      'a b.pipe',
      `it's "quoted".pipe`,
      '$HOME;ls.pipe',
      '-n.pipe',
      ' lead and trail ',
    ];
    const paths = names.map((n) => join(root, n));
    expect(await mkfifo(paths)).toBe(true);
    for (const p of paths) expect(await isFifo(p)).toBe(true);
    // Several makings at once are answered each in turn, by the same shell.
    const batches = Array.from({ length: 5 }, (_, i) => [
      join(root, `b${i}.0.pipe`),
      join(root, `b${i}.1.pipe`),
    ]);
    expect(await Promise.all(batches.map(mkfifo))).toEqual(Array(5).fill(true));
    for (const p of batches.flat()) expect(await isFifo(p)).toBe(true);
    expect(pipeMakerPid()).toBe(pid);
  });

  it('says when pipes could not be made, and makes the next ones', async () => {
    expect(await mkfifo([join(root, 'missing', 'x.pipe')])).toBe(false);
    // A path that is there already is no pipe made.
    expect(await mkfifo([join(root, 'plain.pipe')])).toBe(false);
    expect(await mkfifo([join(root, 'after.pipe')])).toBe(true);
    expect(await isFifo(join(root, 'after.pipe'))).toBe(true);
  });

  it('makes them itself once the shell has gone, a making under way included', async () => {
    const pid = pipeMakerPid();
    expect(pid).not.toBeNull();
    const during = mkfifo([join(root, 'during.pipe')]);
    process.kill(pid as number, 'SIGKILL');
    expect(await during).toBe(true);
    expect(await mkfifo([join(root, 'gone.pipe')])).toBe(true);
    expect(pipeMakerPid()).toBeNull();
    for (const p of ['during.pipe', 'gone.pipe']) expect(await isFifo(join(root, p))).toBe(true);
  });
});
