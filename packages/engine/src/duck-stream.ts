import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { namedPipes } from './fifos';
import { JsonArrayLines } from './json-lines';
import type { RecordBytes } from './payloads';
import { readAhead } from './read-ahead';
import { pump, RECORD_PIPES } from './record-pipes';

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
