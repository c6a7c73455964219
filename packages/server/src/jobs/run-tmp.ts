import { rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

// Run temporary directories (spools, DuckDB spill files) are named after the worker process
// that made them: `sluice-run-<pid>-<random>` in the system temp directory. A worker killed
// mid-run cannot remove its own; the next worker to start on the machine removes those whose
// process is gone. Only directories of this naming, owned by this user, of a process that no
// longer exists are touched: a live worker's runs, or anything else in /tmp, never are.

const PREFIX = 'sluice-run-';
const NAME = /^sluice-run-(\d+)-[A-Za-z0-9]+$/;

/** A fresh directory for one run attempt of this process. */
export function makeRunTmpDir(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`));
}

let pipeDir: string | null = null;

/**
 * This process's directory of spare named pipes for its transforms (the engine makes it on
 * first use): named as a run directory, so a killed worker's is removed as its runs' are.
 */
export function runPipeDir(): string {
  if (pipeDir) return pipeDir;
  const dir = path.join(os.tmpdir(), `${PREFIX}${process.pid}-pipes`);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  pipeDir = dir;
  return dir;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Removes the run directories of dead worker processes; returns how many were removed. */
export async function removeStaleRunTmpDirs(dir = os.tmpdir()): Promise<number> {
  let entries: string[];
  try {
    entries = await fs.readdir(dir);
  } catch {
    return 0;
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  let removed = 0;
  for (const name of entries) {
    const m = NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || processExists(pid)) continue;
    const full = path.join(dir, name);
    try {
      const st = await fs.lstat(full);
      if (!st.isDirectory() || (uid !== null && st.uid !== uid)) continue;
      await fs.rm(full, { recursive: true, force: true });
      removed++;
    } catch {
      // Gone already (another worker starting at the same time), or not ours to remove.
    }
  }
  return removed;
}
