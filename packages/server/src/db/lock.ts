import fs from 'node:fs';
import path from 'node:path';

export type DataDirLock = { release(): void };

export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `the embedded store in ${dir} is in use by process ${pid}; stop that process first, ` +
        'or point DATABASE_URL at a PostgreSQL server to share one store between processes',
    );
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite is a single-process database: two processes writing one data directory corrupt it.
 * A lock file holding the owner's pid keeps a second process out; a lock left by a dead
 * process is taken over.
 */
export function acquireDataDirLock(dir: string): DataDirLock {
  const file = path.join(dir, 'sluice.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        // A process that opens and closes stores (a test runner, a restart in place) would
        // otherwise gather one exit listener per store it ever opened.
        process.off('exit', release);
        try {
          if (fs.readFileSync(file, 'utf8') === String(process.pid)) fs.unlinkSync(file);
        } catch {
          // already gone
        }
      };
      process.once('exit', release);
      return { release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new DataDirLockedError(dir, pid);
      }
      if (pid === process.pid) throw new DataDirLockedError(dir, pid);
      fs.unlinkSync(file);
    }
  }
  throw new Error(`could not lock ${dir}`);
}
