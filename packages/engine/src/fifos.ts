import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { mkfifo, startPipeMaker } from './mkfifo';

// The named pipes between DuckDB and the worker (the result's CSV, duck-csv.ts; a JSON input's
// records, duck-stream.ts). Node has no mkfifo, so pipes take an mkfifo process: one a shell of
// ours starts (mkfifo.ts), since starting it from a worker that holds DuckDB (200–300 MB
// resident) would hold the event loop for 17–100 ms while the kernel copies the worker's memory
// map. Even so a making is a round trip through two processes that the records' arrival would
// wait for, twice a run (docs/benchmarks.md, "a transform's pipes made ahead"). With a directory for
// spare pipes (`sparePipesIn`, the process's own, on the file system of its runs' directories),
// a transform takes pipes made earlier by renaming them into its own directory, and the next
// transform's spares are made a moment after this one closed, off the run's way. Without a
// directory, or once the spares ran out, pipes are made on the spot, the spares in the same
// process.

/** Spares kept: the result's pipe and one JSON input's 32 (record-pipes.ts, RECORD_PIPES). */
export const SPARE_PIPES = 33;
/** After a transform closed, the wait before its spares are replaced (its run still ends). */
const RESTOCK_MS = 500;

const spares = {
  dir: null as string | null,
  ready: null as Promise<boolean> | null,
  free: [] as string[],
  /** Spares being made now (counted so that two makings at once do not both fill the stock). */
  coming: 0,
  made: 0,
  making: null as Promise<void> | null,
  timer: null as NodeJS.Timeout | null,
};

/** Keeps spare pipes in `dir` (made when first needed; the caller removes it at exit). */
export function sparePipesIn(dir: string): void {
  startPipeMaker();
  if (spares.dir === dir) return;
  spares.dir = dir;
  spares.ready = null;
  spares.free = [];
  spares.coming = 0;
}

/** New spare paths up to SPARE_PIPES, or none without a usable directory. */
async function wanted(): Promise<string[]> {
  const dir = spares.dir;
  if (!dir) return [];
  // Emptied first: a directory of an earlier process with the same id may still be there.
  spares.ready ??= rm(dir, { recursive: true, force: true })
    .then(() => mkdir(dir, { recursive: true, mode: 0o700 }))
    .then(
      () => true,
      () => false,
    );
  if (!(await spares.ready) || spares.dir !== dir) return [];
  const paths = Array.from({ length: Math.max(0, SPARE_PIPES - spares.free.length - spares.coming) }, () =>
    join(dir, `${spares.made++}.pipe`),
  );
  spares.coming += paths.length;
  return paths;
}

/** The makings under way (a transform's on the spot, a restock's): stopSparePipes waits for them. */
const underWay = new Set<Promise<boolean>>();

/** Makes the spares (`extra` with them): one mkfifo process. */
function makeSpares(extra: string[]): Promise<boolean> {
  const making = makeSparesNow(extra).finally(() => underWay.delete(making));
  underWay.add(making);
  return making;
}

async function makeSparesNow(extra: string[]): Promise<boolean> {
  const more = await wanted();
  if (extra.length === 0 && more.length === 0) return true;
  const made = await mkfifo([...extra, ...more]);
  spares.coming = Math.max(0, spares.coming - more.length);
  if (made) {
    spares.free.push(...more);
    return true;
  }
  // A spare that could not be made (its directory gone: made again next time) must not keep
  // the pipes asked for from being made; mkfifo made those it could, so they go first.
  if (more.length === 0 || extra.length === 0) return extra.length === 0;
  spares.ready = null;
  await Promise.all(extra.map((path) => rm(path, { force: true })));
  return mkfifo(extra);
}

/**
 * Named pipes at `paths` (anything there is replaced): spares renamed there, or new ones.
 * Resolves with the paths, or null where pipes cannot be made (no mkfifo).
 */
export async function namedPipes(paths: string[]): Promise<string[] | null> {
  // The pipes' readers and writers rely on Linux's FIFO semantics (a read end opened without
  // blocking reads as empty, not ended, until a writer has come and gone: duck-csv.ts): elsewhere
  // a transform's inputs and result go through files.
  if (process.platform !== 'linux') return null;
  await Promise.all(paths.map((path) => rm(path, { force: true })));
  await spares.making;
  if (spares.free.length >= paths.length) {
    const taken = spares.free.splice(0, paths.length);
    const moved = await Promise.all(
      taken.map((from, i) =>
        rename(from, paths[i]).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (moved.every(Boolean)) return paths;
    // Spares gone (their directory removed): the paths made now, and new spares with them.
    await Promise.all(paths.map((path) => rm(path, { force: true })));
    spares.free = [];
  }
  return (await makeSpares(paths)) ? paths : null;
}

/** A transform closed: its spares are replaced a moment later, off its run's way. */
export function restockPipes(): void {
  if (!spares.dir || spares.timer || spares.free.length >= SPARE_PIPES) return;
  spares.timer = setTimeout(() => {
    spares.timer = null;
    spares.making ??= makeSpares([])
      .then(() => {})
      .finally(() => {
        spares.making = null;
      });
  }, RESTOCK_MS);
  spares.timer.unref();
}

/**
 * Makes the spares now, a restock waiting on its timer included, and resolves once they are
 * made (a worker's warm start, before its first run takes them).
 */
export async function stockPipes(): Promise<void> {
  if (spares.timer) clearTimeout(spares.timer);
  spares.timer = null;
  if (!spares.dir) return;
  await spares.making;
  if (spares.free.length < SPARE_PIPES) await makeSpares([]);
}

/**
 * Stops keeping spares: a restock not yet started is dropped, every making under way (a
 * restock's, or a transform's on the spot, which may still be running when its run has failed)
 * is waited for, and the directory is forgotten, so its owner can remove it without a spare being
 * made inside it meanwhile (the test harness between runs; a worker's directory goes at its exit).
 */
export async function stopSparePipes(): Promise<void> {
  if (spares.timer) clearTimeout(spares.timer);
  spares.timer = null;
  spares.dir = null;
  spares.ready = null;
  spares.free = [];
  spares.coming = 0;
  await Promise.allSettled(underWay);
}
