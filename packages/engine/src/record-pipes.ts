import {
  close as closeFd,
  closeSync,
  constants,
  open as openCb,
  openSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { promisify } from 'node:util';

// The named pipes a JSON input's records reach DuckDB through, after the sample (duck-stream.ts):
// the records are written into them in turn, one record per line, each pipe once DuckDB's query
// opened it, so that the query reads them while the source's response still arrives.

const NL = 0x0a;

/**
 * Bytes of the records after the sample that go into each pipe before the next (`pipeBytes`):
 * small first, so the query's first rows leave DuckDB after a megabyte instead of after its
 * 32 MiB read buffer filled (docs/benchmarks.md), growing so that `RECORD_PIPES` pipes carry
 * 120 MiB; the last takes whatever is left.
 */
export const RECORD_PIPES = 32;
const pipeBytes = (i: number) => 2 ** 20 * 2 ** Math.floor(i / 8);

/**
 * Removes the named pipe `fifo` without leaving its reader waiting. Opened on both ends without
 * blocking (the read end first, so the write end's open succeeds), it wakes a reader waiting in
 * its open; a reader that opens it before it is removed finds a writer and reads to the end once
 * the writers closed, one that comes later finds no file (the query fails: writing stopped).
 * Without this, a reader that reached the pipe just after the writer had given up on it waited
 * in its open for good.
 */
function release(fifo: string) {
  const fds: number[] = [];
  for (const flags of [constants.O_RDONLY, constants.O_WRONLY]) {
    try {
      fds.push(openSync(fifo, flags | constants.O_NONBLOCK));
    } catch {
      break;
    }
  }
  rmSync(fifo, { force: true });
  for (const fd of fds.reverse()) closeSync(fd);
}

/** How often a record pipe's write end is tried while its reader has not opened it. */
const OPEN_RETRY_MS = 1;
/** A record pipe of this process is being opened by a blocking open (`pump`'s `openNext`). */
let blockingOpen = false;
const openFd = promisify(openCb);
const closeQuietly = (fd: number) => closeFd(fd, () => {});

/** `fifo`'s write end opened without blocking, or null while it has no reader. */
function openWriter(fifo: string): number | null {
  try {
    return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENXIO') return null;
    throw err;
  }
}

/**
 * Writes `chunks`, one record per line, into the named pipes `fifos` in turn, each once its
 * reader opened it: a pipe ends at the first line end after its share (`pipeBytes`), and the
 * pipes left when the records ended become empty files. `stop()` ends the writing (the
 * reader has what it wanted, or never came): the rest is still read to its end, so the producer
 * finishes (its count and cursor) and the JSON is checked. `done` rejects with the input's own
 * failure only.
 */
export function pump(chunks: AsyncGenerator<Uint8Array>, fifos: string[]) {
  let stopped = false;
  let wake: (() => void) | null = null;
  // The pipe being opened or written; the reader is at it or before it (it opens the next only
  // after this one ended).
  let at = 0;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    wake?.();
    // No pipe may keep the reader waiting: the one being written ends (this side closed) and it
    // and every later one go, each released first (see `release`).
    sock?.destroy();
    for (const fifo of fifos.slice(at)) release(fifo);
  };
  const stopping = new Promise<void>((r) => {
    wake = r;
  });
  /**
   * The pipe `at` opened for writing once its reader came, or null once stopped. A blocking
   * open waits in one of libuv's four pool threads, which DuckDB's own calls run in too: when
   * every transform of the process opened so, three at once (each with its query running and a
   * record pipe opening) waited on each other for good (`fifo-opens.test.ts`). So one open at a
   * time in the process blocks (it returns the moment the reader comes); any other is tried
   * without blocking (ENXIO while the pipe has no reader) every millisecond.
   */
  const openNext = async (): Promise<net.Socket | null> => {
    const fifo = fifos[at];
    const fd = blockingOpen ? await pollOpen(fifo) : await waitOpen(fifo);
    if (fd === null) return null;
    const s = new net.Socket({ fd, readable: false, writable: true });
    // The reader leaving early (EPIPE) is no failure of the input: writing stops.
    s.on('error', stop);
    return s;
  };
  const pollOpen = async (fifo: string): Promise<number | null> => {
    for (;;) {
      if (stopped) return null;
      const fd = openWriter(fifo);
      if (fd !== null) return fd;
      await Promise.race([new Promise((r) => setTimeout(r, OPEN_RETRY_MS)), stopping]);
    }
  };
  const waitOpen = async (fifo: string): Promise<number | null> => {
    if (stopped) return null;
    blockingOpen = true;
    try {
      // `stop` releases it by opening the pipe as a reader (`release`).
      const opening = openFd(fifo, constants.O_WRONLY);
      opening.catch(() => {});
      await Promise.race([opening, stopping]);
      if (!stopped) return await opening;
      const fd = await openFd(fifo, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => null);
      await opening.then(closeQuietly, () => {});
      if (fd !== null) closeQuietly(fd);
      return null;
    } finally {
      blockingOpen = false;
    }
  };
  const ending = (s: net.Socket) => {
    if (stopped) s.destroy();
    else return new Promise<void>((r) => s.end(() => r()));
  };
  let sock: net.Socket | null = null;
  const done = (async () => {
    let written = 0;
    // The first pipe is opened once the first records are there (they are read ahead,
    // `sampleArray`, while DuckDB still detects the columns and prepares the query).
    let opened = false;
    const send = async (bytes: Uint8Array) => {
      if (stopped || !sock || bytes.byteLength === 0) return;
      written += bytes.byteLength;
      if (!sock.write(bytes)) {
        const s = sock;
        await new Promise<void>((r) => {
          const go = () => {
            s.off('drain', go);
            r();
          };
          s.on('drain', go);
          stopping.then(go);
        });
      }
    };
    try {
      for await (const chunk of chunks) {
        if (!opened) {
          opened = true;
          sock = await openNext();
        }
        let rest = chunk;
        // Whole lines up to the pipe's share, then the next pipe (the last takes the rest).
        while (!stopped && sock && at < fifos.length - 1) {
          const share = pipeBytes(at) - written;
          const nl = share <= rest.byteLength ? rest.indexOf(NL, Math.max(0, share - 1)) : -1;
          if (nl === -1) break;
          await send(rest.subarray(0, nl + 1));
          rest = rest.subarray(nl + 1);
          await ending(sock);
          at++;
          written = 0;
          sock = await openNext();
        }
        await send(rest);
      }
    } finally {
      // The pipes the records did not reach (or a failed input left) become empty files
      // before the current one ends, while the reader is still in it: it reads them without
      // waiting for a writer, instead of a turn with this loop for each.
      // Synchronously: the pool's threads may all be taken by DuckDB's queries, this one's included,
      // which waits for the current pipe to end (`openNext`).
      if (!stopped)
        for (const f of fifos.slice(at + 1)) {
          rmSync(f, { force: true });
          writeFileSync(f, '');
        }
      // No records after the sample: the first pipe still ends, with nothing in it.
      if (!opened && !stopped) {
        opened = true;
        sock = await openNext();
      }
      const s = sock as net.Socket | null;
      if (s) await ending(s);
    }
  })();
  done.catch(() => {});
  return { done, stop };
}
