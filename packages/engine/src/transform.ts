import { createWriteStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { csvExport, csvOutput, namedPipe } from './duck-csv';
import { appendCell, bigintsAsText, duckType, outputConverter, paramValues } from './duck-values';
import { Canceled, raceAbort } from './meter';
import type { Column, Payload, RowsPayload } from './payloads';
import { RunError } from './run-error';

// A transform step runs its SQL in an in-process DuckDB of its own: every upstream payload
// becomes a table named by the upstream step's slug, and the result streams out chunk by chunk.
// The database is sandboxed: no extension is installed or loaded, files are reachable only in
// the step's own directory, and the configuration is locked before user SQL runs.

type Duck = typeof import('@duckdb/node-api');

export { duckType } from './duck-values';

let duckModule: Promise<Duck> | null = null;
// Loaded on first use: servers that never run a transform never load the native module.
const duck = () => (duckModule ??= import('@duckdb/node-api'));

export type TransformOptions = {
  slug: string;
  sql: string;
  /** Values of the `$name` parameters of the SQL (templates become bound parameters). */
  params?: Record<string, unknown>;
  inputs: { slug: string; payload: Payload }[];
  /** The step's own directory (created here): loaded files and DuckDB spill files. */
  dir: string;
  signal: AbortSignal;
  memoryLimit?: string;
  threads?: number;
  /** The step's log: which way each input and the result take. */
  log?(level: 'info' | 'warn', message: string): void;
};

export type TransformOutput = {
  payload: RowsPayload;
  /** Frees the database once its native call in flight returned; safe to call more than once. */
  close(): Promise<void>;
};

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

async function writeFile(source: AsyncIterable<string | Uint8Array>, file: string) {
  await pipeline(Readable.from(source, { objectMode: false }), createWriteStream(file));
}

async function* ndjson(batches: AsyncIterable<unknown[]>) {
  for await (const b of batches)
    if (b.length > 0) yield `${b.map((r) => JSON.stringify(r, bigintsAsText)).join('\n')}\n`;
}

async function loadInput(
  d: Duck,
  conn: DuckDBConnection,
  input: { slug: string; payload: Payload },
  dir: string,
  log: NonNullable<TransformOptions['log']>,
): Promise<boolean> {
  const { slug, payload } = input;
  const table = ident(slug);
  switch (payload.kind) {
    case 'rows': {
      if (payload.columns.length === 0) {
        await conn.run(`CREATE TABLE ${table} (value VARCHAR)`);
        for await (const _ of payload.batches) {
        }
        return true;
      }
      const cols = payload.columns.map((c) => `${ident(c.name)} ${duckType(c.type)}`).join(', ');
      await conn.run(`CREATE TABLE ${table} (${cols})`);
      const ap = await conn.createAppender(slug);
      const width = payload.columns.length;
      try {
        for await (const batch of payload.batches) {
          for (const row of batch) {
            for (let i = 0; i < width; i++) appendCell(d, ap, row[i]);
            ap.endRow();
          }
        }
        ap.flushSync();
      } finally {
        ap.closeSync();
      }
      return false;
    }
    case 'json': {
      if (payload.array) {
        // The source's bytes of the records array go to DuckDB as they arrive (through a named
        // pipe where the system has mkfifo, else a file), and DuckDB parses them: no record is
        // decoded in JavaScript on the way.
        const file = join(dir, `${slug}.records.json`);
        const pipe = await namedPipe(`${file}.pipe`);
        const from = pipe ?? file;
        const create = `CREATE TABLE ${table} AS SELECT * FROM read_json_auto(${literal(from)}, format = 'array')`;
        let loaded: PromiseSettledResult<unknown>;
        if (pipe) {
          const load = conn.run(create);
          // DuckDB failing before it opened the pipe would leave the writer waiting for a reader.
          load.catch(() =>
            open(pipe, 'r')
              .then((fd) => fd.close())
              .catch(() => {}),
          );
          const [written, done] = await Promise.allSettled([writeFile(payload.array.chunks, pipe), load]);
          // The pipe breaks (EPIPE) when DuckDB stopped reading: its error is the one to tell.
          if (written.status === 'rejected')
            throw (written.reason as NodeJS.ErrnoException)?.code === 'EPIPE' && done.status === 'rejected'
              ? done.reason
              : written.reason;
          loaded = done;
        } else {
          await writeFile(payload.array.chunks, file);
          loaded = await conn.run(create).then(
            (value) => ({ status: 'fulfilled' as const, value }),
            (reason) => ({ status: 'rejected' as const, reason }),
          );
        }
        const records = payload.array.count();
        log(
          'info',
          `DuckDB reads the JSON records of ${slug} directly from the source's bytes (${records} records)`,
        );
        if (records > 0) {
          if (loaded.status === 'rejected') throw loaded.reason;
          return false;
        }
        if (loaded.status === 'fulfilled') await conn.run(`DROP TABLE ${table}`);
        await conn.run(`CREATE TABLE ${table} (value JSON)`);
        return true;
      }
      log('info', `the JSON records of ${slug} reach DuckDB one by one (the source offers no JSON bytes)`);
      const file = join(dir, `${slug}.ndjson`);
      let records = 0;
      await writeFile(
        ndjson(
          (async function* () {
            for await (const b of payload.batches) {
              records += b.length;
              yield b;
            }
          })(),
        ),
        file,
      );
      if (records === 0) await conn.run(`CREATE TABLE ${table} (value JSON)`);
      else
        await conn.run(
          `CREATE TABLE ${table} AS SELECT * FROM read_json_auto(${literal(file)}, format = 'newline_delimited')`,
        );
      return records === 0;
    }
    case 'csv': {
      const file = join(dir, `${slug}.csv`);
      let bytes = 0;
      await writeFile(
        (async function* () {
          for await (const c of payload.chunks) {
            bytes += c.byteLength;
            yield c;
          }
        })(),
        file,
      );
      if (bytes === 0) await conn.run(`CREATE TABLE ${table} (value VARCHAR)`);
      else
        await conn.run(
          `CREATE TABLE ${table} AS SELECT * FROM read_csv_auto(${literal(file)}, delim = ${literal(payload.delimiter)}, header = ${payload.header})`,
        );
      return bytes === 0;
    }
    default:
      throw new RunError(
        'TRANSFORM_FAILED',
        `input ${slug} is a ${payload.kind} payload; a transform reads rows, JSON or CSV`,
      );
  }
}

const failure = (slug: string, err: unknown, signal: AbortSignal): Error => {
  if (err instanceof Canceled || err instanceof RunError) return err;
  if (signal.aborted) return new Canceled();
  const message = err instanceof Error ? err.message : String(err);
  return new RunError('TRANSFORM_FAILED', `transform ${slug}: ${message}`, slug);
};

/** Loads the inputs, starts the query and hands back its result as a rows stream. */
export async function openTransform(o: TransformOptions): Promise<TransformOutput> {
  const d = await duck();
  const work = join(o.dir, `transform-${o.slug}`);
  await mkdir(join(work, 'spill'), { recursive: true });
  let instance: DuckDBInstance | null = null;
  let conn: DuckDBConnection | null = null;
  // The native call in flight: the database is closed only once it has returned.
  let busy: Promise<unknown> = Promise.resolve();
  const track = <T>(p: Promise<T>): Promise<T> => {
    busy = p.catch(() => {});
    return p;
  };
  let closing: Promise<void> | null = null;
  const onAbort = () => conn?.interrupt();
  const close = () =>
    (closing ??= (async () => {
      o.signal.removeEventListener('abort', onAbort);
      conn?.interrupt();
      await busy;
      conn?.closeSync();
      instance?.closeSync();
    })());
  try {
    instance = await d.DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      memory_limit: o.memoryLimit ?? '256MB',
      temp_directory: join(work, 'spill'),
      threads: String(o.threads ?? 2),
    });
    conn = await instance.connect();
    const c = conn;
    o.signal.addEventListener('abort', onAbort, { once: true });
    for (const setting of [
      `SET TimeZone = 'UTC'`,
      `SET allowed_directories = [${literal(`${work}/`)}]`,
      'SET enable_external_access = false',
      'SET lock_configuration = true',
    ])
      await c.run(setting);

    const log = o.log ?? (() => {});
    let columnless = 0;
    for (const input of o.inputs) {
      if (o.signal.aborted) throw new Canceled();
      if (await raceAbort(track(loadInput(d, c, input, work, log)), o.signal)) columnless++;
    }

    const statements = await c.extractStatements(o.sql);
    if (statements.count !== 1)
      throw new RunError('TRANSFORM_FAILED', `transform ${o.slug}: the SQL must be one statement`, o.slug);
    const params = o.params && Object.keys(o.params).length > 0 ? paramValues(o.params) : undefined;
    // Checked before the query streams: preparing another statement would end that stream.
    const exp = await track(csvExport(d, c, o.sql));
    type Streamed = Awaited<ReturnType<DuckDBConnection['stream']>>;
    let result: Streamed | null = null;
    let columns: Column[];
    if ('select' in exp) {
      // The query runs only for the shape its consumer takes: streamed rows or DuckDB's CSV.
      columns = exp.columns;
    } else {
      try {
        result = await track(c.stream(o.sql, params));
      } catch (err) {
        // Inputs that all arrived empty (a JSON page without records, an empty CSV) have no
        // columns, so a query naming columns cannot bind. Nothing came in, so nothing goes out:
        // an incremental run without new data succeeds instead of failing on its SQL.
        if (
          o.inputs.length > 0 &&
          columnless === o.inputs.length &&
          /^Binder Error/.test(String((err as Error)?.message))
        ) {
          await close();
          return { payload: { kind: 'rows', columns: [], batches: (async function* () {})() }, close };
        }
        throw err;
      }
      const names = result.deduplicatedColumnNames();
      columns = result.columnTypes().map((t, i) => ({ name: names[i], type: String(t) }));
    }
    const converter = outputConverter(d);
    const { signal, slug } = o;
    async function* batches(): AsyncGenerator<unknown[][]> {
      try {
        const r = result ?? (await track(c.stream(o.sql, params)));
        for (;;) {
          const chunk = await track(r.fetchChunk());
          if (!chunk || chunk.rowCount === 0) return;
          yield chunk.convertRows(converter);
        }
      } catch (err) {
        throw failure(slug, err, signal);
      } finally {
        await close();
      }
    }
    let csv: RowsPayload['csv'];
    if ('select' in exp) {
      let rows = 0;
      const csvExp = exp;
      async function* chunks(): AsyncGenerator<Uint8Array> {
        try {
          const out = await csvOutput(c, csvExp, join(work, 'result.csv'), track);
          for await (const chunk of out.chunks) yield chunk;
          rows = await out.rows;
          log(
            'info',
            `DuckDB wrote the result as CSV for COPY (${rows} rows${out.piped ? ', through a pipe' : ''})`,
          );
        } catch (err) {
          throw failure(slug, err, signal);
        } finally {
          await close();
        }
      }
      csv = { chunks: chunks(), count: () => rows };
    } else log('info', `the result leaves DuckDB row by row: ${exp.reason}`);
    return { payload: { kind: 'rows', columns, batches: batches(), ...(csv ? { csv } : {}) }, close };
  } catch (err) {
    await close();
    throw failure(o.slug, err, o.signal);
  }
}
