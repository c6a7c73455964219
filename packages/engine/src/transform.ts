import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { csvExport, csvOutput, resultPipe } from './duck-csv';
import { type LoadInput, literal, stageInput, streamable } from './duck-inputs';
import { readsOnce } from './duck-plan';
import type { StreamedInput } from './duck-stream';
import { outputConverter, paramValues } from './duck-values';
import { restockPipes } from './fifos';
import { Canceled, raceAbort } from './meter';
import type { Column, Payload, RowsPayload } from './payloads';
import { QUERY_SLOTS, querySlot, querySlots } from './query-slots';
import { RunError } from './run-error';

// A transform step runs its SQL in an in-process DuckDB of its own: every upstream payload
// becomes a table named by the upstream step's slug, and the result streams out chunk by chunk.
// The database is sandboxed: no extension is installed or loaded, files are reachable only in
// the step's own directory, and the configuration is locked before user SQL runs.

type Duck = typeof import('@duckdb/node-api');

export { duckType } from './duck-values';

let duckModule: Promise<Duck> | null = null;
// @duckdb/node-api is CommonJS: require() runs its ~180 files without the ESM loader scanning
// each for its exports first (0.15 s of CPU instead of 0.4 s, docs/benchmarks.md).
const requireCjs = createRequire(import.meta.url);
// Loaded on first use: servers that never run a transform never load the native module.
const duck = () => (duckModule ??= Promise.resolve().then(() => requireCjs('@duckdb/node-api') as Duck));

/**
 * Loads DuckDB's native module and its JavaScript; a failed load is tried again on the next
 * call. A worker awaits it before its first job when a deployed pipeline has a transform
 * (docs/operations.md#a-workers-warm-start).
 */
export async function loadTransforms(): Promise<void> {
  try {
    await duck();
  } catch (err) {
    duckModule = null;
    throw err;
  }
}

/**
 * Starts loading DuckDB's native module: a run with a transform calls it when it starts, so
 * the load (it holds the event loop for ~0.1–0.4 s) overlaps the sources' requests instead of
 * following them (docs/benchmarks.md).
 */
export function preloadDuck(): void {
  loadTransforms().catch(() => {});
}

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
  /** Threads that load the inputs (the query itself runs on one). */
  threads?: number;
  /** The step's log: which way each input and the result take. */
  log?(level: 'info' | 'warn', message: string): void;
  /** Records of a JSON array DuckDB detects its columns on (default DuckDB's own, 20,480). */
  jsonSampleRecords?: number;
};

export type TransformOutput = {
  payload: RowsPayload;
  /** Frees the database once its native call in flight returned; safe to call more than once. */
  close(): Promise<void>;
};

const failure = (slug: string, err: unknown, signal: AbortSignal): Error => {
  if (err instanceof Canceled || err instanceof RunError) return err;
  if (signal.aborted) return new Canceled();
  const message = err instanceof Error ? err.message : String(err);
  return new RunError('TRANSFORM_FAILED', `transform ${slug}: ${message}`, slug);
};

/** Loads the inputs, starts the query and hands back its result as a rows stream. */
export async function openTransform(o: TransformOptions): Promise<TransformOutput> {
  const work = join(o.dir, `transform-${o.slug}`);
  await mkdir(join(work, 'spill'), { recursive: true });
  const log = o.log ?? (() => {});
  // mkfifo is a process of its own: the result's pipe is made while the inputs arrive.
  const resultFile = join(work, 'result.csv');
  const piping = resultPipe(resultFile);
  piping.catch(() => {});
  // The inputs' bytes go to files while DuckDB starts; a failure counts where it is awaited.
  const staged = o.inputs.map((input) => stageInput(input, work, log, o.jsonSampleRecords));
  for (const s of staged) s.catch(() => {});
  let instance: DuckDBInstance | null = null;
  let conn: DuckDBConnection | null = null;
  // The native call in flight: the database is closed only once it has returned.
  let busy: Promise<unknown> = Promise.resolve();
  const track = <T>(p: Promise<T>): Promise<T> => {
    busy = p.catch(() => {});
    return p;
  };
  let closing: Promise<void> | null = null;
  // Held from the query's first read until the database is closed (query-slots.ts).
  let releaseSlot: (() => void) | null = null;
  // Inputs the query reads while they arrive (duck-stream.ts).
  const streams: StreamedInput[] = [];
  // DuckDB forgets an interrupt when its next statement starts, so one sent while no statement
  // runs (the query not started yet, or its call still waiting for a thread) would be lost and
  // the query would run to its end. Once aborted or closing, it is sent again every 50 ms until
  // the database closes.
  let interrupting: ReturnType<typeof setInterval> | null = null;
  const interrupt = () => {
    conn?.interrupt();
    interrupting ??= setInterval(() => conn?.interrupt(), 50);
    interrupting.unref?.();
  };
  const close = () =>
    (closing ??= (async () => {
      o.signal.removeEventListener('abort', interrupt);
      interrupt();
      for (const s of streams) s.stop();
      await busy;
      if (interrupting) clearInterval(interrupting);
      // Closing holds the event loop (20–30 ms after a streamed 300,000 records): after a turn
      // of it, so that the consumer's last writes (a sink's end of COPY) go out first and the
      // target finishes its copy while the database closes (docs/benchmarks.md).
      await new Promise<void>((resolve) => setImmediate(resolve));
      try {
        conn?.closeSync();
        instance?.closeSync();
      } finally {
        releaseSlot?.();
        restockPipes();
      }
    })());
  try {
    const d = await duck();
    // The query runs on one thread (below). Inputs that are all JSON records arrays stream into
    // it and are read on one thread anyway, so their database starts with one: changing the
    // count makes DuckDB return every freed page of the process to the system (jemalloc's and
    // malloc's), which the query then faults in again (docs/benchmarks.md). An input that falls
    // back to a whole load gets the loading threads first (`wholeLoad`).
    const loadThreads = o.threads ?? 2;
    let threads = o.inputs.length > 0 && o.inputs.every((i) => streamable(i.payload)) ? 1 : loadThreads;
    const setThreads = async (n: number) => {
      if (n === threads) return;
      await conn?.run(`SET threads = ${n}`);
      threads = n;
    };
    instance = await d.DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      memory_limit: o.memoryLimit ?? '256MB',
      temp_directory: join(work, 'spill'),
      threads: String(threads),
    });
    conn = await instance.connect();
    const c = conn;
    o.signal.addEventListener('abort', interrupt, { once: true });
    for (const setting of [
      `SET TimeZone = 'UTC'`,
      `SET allowed_directories = [${literal(`${work}/`)}]`,
      'SET enable_external_access = false',
    ])
      await c.run(setting);

    let columnless = 0;
    for (const stage of staged) {
      if (o.signal.aborted) throw new Canceled();
      const load: LoadInput = await raceAbort(stage, o.signal);
      const loaded = await raceAbort(track(load(d, c, () => setThreads(loadThreads))), o.signal);
      if (loaded.columnless) columnless++;
      if (loaded.stream) streams.push(loaded.stream);
    }
    if (querySlots().free === 0)
      log('info', `waiting for one of the ${QUERY_SLOTS} transform queries this process runs at once to end`);
    releaseSlot = await querySlot(o.signal);
    // The inputs load with every thread; the query runs on one (a streamed JSON input is read
    // on one thread either way: its records arrive through one pipe). Its consumer (a COPY into the
    // target, or rows converted here) needs a core of its own, and DuckDB keeps the result's
    // order across threads by holding its output back until a large first batch is complete,
    // so a consumer would wait idle instead of starting with the first row. Locked before any
    // user SQL reaches DuckDB.
    await setThreads(1);
    await c.run('SET lock_configuration = true');
    // A streamed input is read once, to its end: a query that would read it twice (a self-join)
    // or stop early (LIMIT) gets it as a table, read from the same stream.
    if (streams.length > 0 && !(streams.length === 1 && (await track(readsOnce(c, o.sql))))) {
      for (const s of streams) await track(s.materialize(c));
      log('info', 'the query reads its JSON input more than once or not to its end: loaded as a table first');
    }
    // Once the query ended: each streamed input read to its end (its failure is the run's).
    const finishInputs = async () => {
      for (const s of streams) await s.finish();
    };
    const inputFailure = () => streams.map((s) => s.failure()).find((e) => e != null);

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
        if (signal.aborted) throw new Canceled();
        const r = result ?? (await track(c.stream(o.sql, params)));
        for (;;) {
          const chunk = await track(r.fetchChunk());
          if (!chunk || chunk.rowCount === 0) break;
          yield chunk.convertRows(converter);
        }
        await finishInputs();
      } catch (err) {
        throw failure(slug, inputFailure() ?? err, signal);
      } finally {
        // Not awaited: the consumer goes on at once (its step awaits the same close).
        close().catch(() => {});
      }
    }
    let csv: RowsPayload['csv'];
    if ('select' in exp) {
      let rows = 0;
      const csvExp = exp;
      async function* chunks(): AsyncGenerator<Uint8Array> {
        try {
          if (signal.aborted) throw new Canceled();
          const out = await csvOutput(c, csvExp, resultFile, track, piping);
          for await (const chunk of out.chunks) yield chunk;
          rows = await out.rows;
          await finishInputs();
          log(
            'info',
            `DuckDB wrote the result as CSV for COPY (${rows} rows${out.piped ? ', through a pipe' : ''})`,
          );
        } catch (err) {
          throw failure(slug, inputFailure() ?? err, signal);
        } finally {
          close().catch(() => {});
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
