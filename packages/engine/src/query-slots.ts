import { Canceled } from './meter';

// A transform's query runs in DuckDB through calls that each hold one of libuv's pool threads
// (`UV_THREADPOOL_SIZE`, 4 by default) while they run, and a call that reads a record pipe or
// writes the result's pipe waits there as long as the other end does. The other ends may need a
// pool thread themselves (records read from a spool's file, a result spooled to one, any file
// system call of the run): with every thread held by queries waiting on their pipes, nothing
// moves again. Four transforms at once whose records came from files never ended
// (docs/benchmarks.md). So a process runs at most two queries fewer than its pool has threads:
// one thread stays for a record pipe's blocking open (record-pipes.ts), one for everything else.

/** libuv's pool size for a value of `UV_THREADPOOL_SIZE`, as libuv reads it (C's atoi, 1–1024). */
export function poolSize(raw: string | undefined): number {
  if (raw === undefined) return 4;
  const n = Number.parseInt(raw.trim(), 10);
  if (!Number.isFinite(n) || n === 0) return 1;
  return n < 0 || n > 1024 ? 1024 : n;
}

/** Transform queries one process runs at once. */
export const QUERY_SLOTS = Math.max(1, poolSize(process.env.UV_THREADPOOL_SIZE) - 2);

let free = QUERY_SLOTS;
const waiting: (() => void)[] = [];

function release(): void {
  const next = waiting.shift();
  if (next) next();
  else free++;
}

/** Waits for a query slot (rejects with Canceled once `signal` aborts); resolves with its release. */
export async function querySlot(signal: AbortSignal): Promise<() => void> {
  if (signal.aborted) throw new Canceled();
  if (free > 0) free--;
  else
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', abort);
        resolve();
      };
      const abort = () => {
        const i = waiting.indexOf(go);
        if (i >= 0) waiting.splice(i, 1);
        reject(new Canceled());
      };
      waiting.push(go);
      signal.addEventListener('abort', abort, { once: true });
    });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
  };
}

/** Slots free and queries waiting for one, now. */
export const querySlots = () => ({ free, waiting: waiting.length });
