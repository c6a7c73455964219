import { lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { namedPipes, restockPipes, SPARE_PIPES, sparePipesIn, stockPipes, stopSparePipes } from './fifos';

const isFifo = async (path: string) => (await lstat(path)).isFIFO();
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('named pipes from spares', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  /** A directory of its own, with spares kept in `spares` inside it. */
  const keepSpares = async () => {
    const root = await mkdtemp(join(tmpdir(), 'sluice-fifos-'));
    dirs.push(root);
    const spares = join(root, 'spares');
    sparePipesIn(spares);
    return { root, spares };
  };

  it('makes the spares with the first pipes, hands them out by renaming, and restocks after', async () => {
    const { root, spares } = await keepSpares();
    // A file already at a path is replaced by the pipe.
    await writeFile(join(root, 'a.pipe'), 'old');
    expect(await namedPipes([join(root, 'a.pipe')])).toEqual([join(root, 'a.pipe')]);
    expect(await isFifo(join(root, 'a.pipe'))).toBe(true);
    expect((await readdir(spares)).length).toBe(SPARE_PIPES);

    // Taken from the spares: renamed into place, nothing made.
    const paths = Array.from({ length: 32 }, (_, i) => join(root, `r${i}.pipe`));
    expect(await namedPipes(paths)).toEqual(paths);
    for (const p of paths) expect(await isFifo(p)).toBe(true);
    expect((await readdir(spares)).length).toBe(SPARE_PIPES - 32);

    restockPipes();
    await wait(900);
    const left = await readdir(spares);
    expect(left.length).toBe(SPARE_PIPES);
    for (const f of left) expect(await isFifo(join(spares, f))).toBe(true);
  });

  it('stocks the spares at once when asked, a restock on its timer included', async () => {
    const { root, spares } = await keepSpares();
    await stockPipes();
    expect((await readdir(spares)).length).toBe(SPARE_PIPES);
    const paths = Array.from({ length: 5 }, (_, i) => join(root, `s${i}.pipe`));
    expect(await namedPipes(paths)).toEqual(paths);
    restockPipes();
    // Not the restock's 500 ms: made now, and a second call finds nothing to make.
    await stockPipes();
    await stockPipes();
    const left = await readdir(spares);
    expect(left.length).toBe(SPARE_PIPES);
    for (const f of left) expect(await isFifo(join(spares, f))).toBe(true);
    await stopSparePipes();
  });

  it('makes one stock of spares when two transforms ask for pipes at once', async () => {
    const { root, spares } = await keepSpares();
    const a = [join(root, 'result.pipe')];
    const b = Array.from({ length: 32 }, (_, i) => join(root, `in${i}.pipe`));
    expect(await Promise.all([namedPipes(a), namedPipes(b)])).toEqual([a, b]);
    await stockPipes();
    expect((await readdir(spares)).length).toBe(SPARE_PIPES);
    await stopSparePipes();
  });

  it('makes the pipes on the spot when the spares are gone', async () => {
    const { root, spares } = await keepSpares();
    expect(await namedPipes([join(root, 'x.pipe')])).not.toBeNull();
    await rm(spares, { recursive: true, force: true });
    const paths = [join(root, 'y.pipe'), join(root, 'z.pipe')];
    expect(await namedPipes(paths)).toEqual(paths);
    for (const p of paths) expect(await isFifo(p)).toBe(true);
  });

  it('makes no spare once stopped, so the directory can be removed (a restock was due)', async () => {
    const { root, spares } = await keepSpares();
    await namedPipes([join(root, 'first.pipe')]);
    await namedPipes(Array.from({ length: 32 }, (_, i) => join(root, `s${i}.pipe`)));
    restockPipes();
    await stopSparePipes();
    const before = (await readdir(spares)).length;
    expect(before).toBe(SPARE_PIPES - 32);
    // The restock that was due makes nothing there, nor does one asked for after the stop.
    restockPipes();
    await wait(900);
    expect((await readdir(spares)).length).toBe(before);
  });

  it('waits for a making under way when stopped (a failed run’s transform still asking)', async () => {
    const { root, spares } = await keepSpares();
    const asked = namedPipes([join(root, 'late.pipe')]);
    // Stopped once the spares' directory is there, while their mkfifo runs.
    while (
      !(await readdir(spares).then(
        () => true,
        () => false,
      ))
    )
      await new Promise((r) => setImmediate(r));
    await stopSparePipes();
    const atStop = (await readdir(spares)).length;
    await asked;
    await wait(100);
    expect((await readdir(spares)).length).toBe(atStop);
  });
});
