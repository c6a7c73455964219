import {
  close as closeFd,
  closeSync,
  constants,
  createWriteStream,
  open as openCb,
  openSync,
  rmSync,
  type WriteStream,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DuckDBConnection } from '@duckdb/node-api';
import { namedPipes } from './fifos';
import { JsonArrayLines } from './json-lines';
import type { RecordBytes } from './payloads';
import { readAhead } from './read-ahead';

// The records array of a JSON input streamed into the query instead of loaded into a table
// first (docs/benchmarks.md, "HTTP JSON → DuckDB → PostgreSQL"). Its first records (DuckDB's own
// sample size for read_json_auto) go to a file, where DuckDB detects the columns once, exactly
// as it would on the whole input; the rest flows through named pipes, one after another, while
// the query reads them. The input's table is then a view over the file and the pipes, with the
// detected columns spelled out, so binding it again (the CSV export prepares the query twice)
// reads no sample. A query that would read the view twice (a self-join) or stop early (LIMIT)
// gets a table, read from the same pipes. Several pipes, not one: DuckDB reads a pipe until its
// read buffer (2 × maximum_object_size, 32 MiB) is full or the pipe ends before it parses any of
// it, so behind one pipe the query's first row waited for 32 MiB of records, and reading and
// parsing took turns in 32 MiB steps; a pipe of 1 MiB ends after 1 MiB (docs/benchmarks.md).

const NL = 0x0a;

/** DuckDB's default `sample_size` of read_json_auto: the records its type detection reads. */
export const JSON_SAMPLE_RECORDS = 20_480;

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

async function write(out: WriteStream, chunk: Uint8Array) {
  if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
}
const ended = (out: WriteStream) =>
  new Promise<void>((resolve, reject) => {
    out.once('error', reject);
    out.end(() => resolve());
  });

/**
 * Bytes of the records after the sample pulled from the source before they are written
 * (read-ahead.ts): the source's work goes on while DuckDB detects the columns on the sample,
 * then while it parses one pipe before the next is written.
 */
export const READ_AHEAD_BYTES = 4 * 2 ** 20;

/** The first `sample` records of the array, as NDJSON in `file`; the rest still to be read. */
export type SampledArray = {
  file: string;
  /** The whole array fitted in the sample. */
  complete: boolean;
  /** The records after the sample, as NDJSON (empty when complete). */
  rest: AsyncGenerator<Uint8Array>;
  /** Records of the whole array, once its bytes were read to their end. */
  count(): number;
};

/** Writes the first `sample` records of `array` to `file` as NDJSON; resolves once they are there. */
export async function sampleArray(
  array: RecordBytes & { lines?: boolean },
  file: string,
  sample: number,
  what: string,
): Promise<SampledArray> {
  const rewriter = new JsonArrayLines(what);
  const lines = array.lines
    ? { push: (c: Uint8Array) => Buffer.from(c.buffer, c.byteOffset, c.byteLength) }
    : rewriter;
  const it = array.chunks[Symbol.asyncIterator]();
  const out = createWriteStream(file);
  out.on('error', () => {});
  let seen = 0;
  let tail: Buffer | null = null;
  let complete = false;
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) {
        complete = true;
        break;
      }
      const buf = lines.push(r.value);
      // Every record ends with a newline, and no newline is anything else (json-lines.ts).
      let at = 0;
      let cut = -1;
      while (seen < sample) {
        const k = buf.indexOf(NL, at);
        if (k === -1) break;
        seen++;
        at = k + 1;
        if (seen === sample) cut = at;
      }
      if (cut >= 0) {
        await write(out, buf.subarray(0, cut));
        tail = buf.subarray(cut);
        break;
      }
      await write(out, buf);
    }
  } finally {
    await ended(out);
  }
  async function* rest(): AsyncGenerator<Uint8Array> {
    if (complete) return;
    if (tail && tail.length > 0) yield tail;
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield lines.push(r.value);
    }
  }
  return {
    file,
    complete,
    rest: complete ? rest() : readAhead(rest(), READ_AHEAD_BYTES),
    count: array.count,
  };
}

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
function pump(chunks: AsyncGenerator<Uint8Array>, fifos: string[]) {
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

/** A JSON input the query reads while it arrives; see the header. */
export type StreamedInput = {
  /** Reads the rest into a table of the same name: the query reads the input twice or stops early. */
  materialize(conn: DuckDBConnection): Promise<void>;
  /** Once the query ended: the rest read to its end; rejects with the input's failure. */
  finish(): Promise<void>;
  /** The input's failure, if it failed (DuckDB then only saw a cut record). */
  failure(): unknown;
  /** Stops writing (the transform closes). */
  stop(): void;
  records(): number;
};

/**
 * Detects the columns on the sample and makes `table` a view over the sample and the pipe, or
 * returns null when the explicit columns would not read the sample as detection does (a date in
 * a format other than ISO 8601, records that are no objects): the caller loads it whole then.
 */
export async function streamArray(
  conn: DuckDBConnection,
  table: string,
  sampled: SampledArray,
  dir: string,
  slug: string,
): Promise<StreamedInput | null> {
  const probe = ident(`sluice_sample_${slug}`);
  // mkfifo is a process of its own: made while DuckDB detects the columns.
  const piping = namedPipes(
    Array.from({ length: RECORD_PIPES }, (_, i) => join(dir, `${slug}.records.${i}.pipe`)),
  );
  piping.catch(() => {});
  await conn.run(
    `CREATE TEMP TABLE ${probe} AS SELECT * FROM read_json_auto(${literal(sampled.file)}, format = 'newline_delimited')`,
  );
  try {
    const cols = (await conn.runAndReadAll(`DESCRIBE ${probe}`)).getRows();
    const spec = `{${cols.map((c) => `${literal(String(c[0]))}: ${literal(String(c[1]))}`).join(', ')}}`;
    const read = (files: string) =>
      `read_json(${files}, format = 'newline_delimited', records = true, columns = ${spec})`;
    const again = read(literal(sampled.file));
    // Every row of the sample the same both ways: count and sum of row hashes (one scan each).
    const tally = (from: string) =>
      `(SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(r)), 0)::VARCHAR FROM ${from} AS r)`;
    try {
      const same = await conn.runAndReadAll(`SELECT ${tally(probe)} = ${tally(again)}`);
      if (same.getRows()[0]?.[0] !== true) return null;
    } catch {
      return null;
    }
    const fifos = await piping;
    if (fifos === null) return null;
    const files = [sampled.file, ...fifos].map(literal).join(', ');
    await conn.run(`CREATE VIEW ${table} AS SELECT * FROM ${read(`[${files}]`)}`);
    let failed: unknown = null;
    const p = pump(
      (async function* () {
        try {
          yield* sampled.rest;
        } catch (err) {
          failed = err;
          throw err;
        }
      })(),
      fifos,
    );
    return {
      async materialize(c) {
        const loaded = ident(`sluice_loaded_${slug}`);
        await c.run(`CREATE TABLE ${loaded} AS SELECT * FROM ${table}`);
        await c.run(`DROP VIEW ${table}`);
        await c.run(`ALTER TABLE ${loaded} RENAME TO ${table}`);
      },
      async finish() {
        p.stop();
        await p.done;
      },
      failure: () => failed,
      stop: p.stop,
      records: sampled.count,
    };
  } finally {
    await conn.run(`DROP TABLE IF EXISTS ${probe}`);
  }
}

/** Appends the rest of a sampled array to its file (the whole input, loaded as one table). */
export async function appendRest(sampled: SampledArray): Promise<void> {
  const out = createWriteStream(sampled.file, { flags: 'a' });
  out.on('error', () => {});
  try {
    for await (const chunk of sampled.rest) await write(out, chunk);
  } finally {
    await ended(out);
  }
}
