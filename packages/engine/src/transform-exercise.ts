import { sparePipesIn, stockPipes } from './fifos';
import type { JsonPayload } from './payloads';
import { openTransform } from './transform';

// A transform run once on made-up records before a worker's first job (docs/operations.md,
// "A worker's warm start"). Loading DuckDB is not all a first transform pays for: its first
// instance, JSON detection and CSV writer run cold in DuckDB, the records' parser and the pipes'
// code run cold in V8, and its named pipes are made on the spot. This goes the way an HTTP
// source's JSON array takes to a SQL sink (detected on a sample, the rest streamed through
// pipes, the result as COPY CSV through a pipe), on records of every JSON kind, then leaves the
// spare pipes made for the first run. Nothing is read from or written to anything but the
// directory it is given.

const RECORDS = 6_000;
const SAMPLE = 1_000;
const CHUNK = 64 * 1024;

function record(i: number) {
  return {
    id: i,
    name: `name ${i}`,
    score: i / 8,
    ok: i % 3 === 0,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 86_400)).toISOString(),
    day: '2026-01-01',
    note: i % 5 === 0 ? null : `a "quoted", comma\nand line ${i}`,
    tags: [`t${i % 7}`],
    meta: { n: i, k: 'v' },
  };
}

async function* arrayChunks(): AsyncGenerator<Uint8Array> {
  const enc = new TextEncoder();
  let text = '[';
  for (let i = 0; i < RECORDS; i++) {
    text += `${i === 0 ? '' : ','}${JSON.stringify(record(i))}`;
    if (text.length >= CHUNK) {
      yield enc.encode(text);
      text = '';
    }
  }
  yield enc.encode(`${text}]`);
}

/** The made-up records as they are: a JSON array's bytes, the records' payload as they come. */
async function asTheyAre(body: () => AsyncIterable<Uint8Array>) {
  const payload: JsonPayload = {
    kind: 'json',
    batches: (async function* () {})(),
    array: { chunks: body(), count: () => RECORDS },
  };
  return { payload, close: async () => {} };
}

/**
 * Runs a transform of made-up JSON records to COPY CSV in `dir` (the caller's, which it
 * removes), with `pipeDir` the process's directory of spare pipes (the one its runs use), and
 * waits for the spares its first run will take. Resolves with the rows the result held.
 */
export async function exerciseTransforms(opts: {
  dir: string;
  pipeDir?: string;
  /**
   * The way the records come in: given the JSON array's bytes, the records' payload as a
   * source step hands them on (e.g. an HTTP source reading them from a server of the process's
   * own), and `close` once they were read. Default: the array's bytes as they are.
   */
  input?: (
    body: () => AsyncIterable<Uint8Array>,
  ) => Promise<{ payload: JsonPayload; close(): Promise<void> }>;
  /** The transform's own log lines (which way the records and the result took). */
  log?(level: 'info' | 'warn', message: string): void;
}): Promise<number> {
  if (opts.pipeDir) sparePipesIn(opts.pipeDir);
  const input = await (opts.input ?? asTheyAre)(arrayChunks);
  try {
    return await transformed(input.payload, opts);
  } finally {
    await input.close();
  }
}

async function transformed(
  payload: JsonPayload,
  opts: { dir: string; log?(level: 'info' | 'warn', message: string): void },
): Promise<number> {
  const out = await openTransform({
    slug: 'exercise',
    sql: 'SELECT * FROM records',
    inputs: [{ slug: 'records', payload }],
    dir: opts.dir,
    signal: new AbortController().signal,
    jsonSampleRecords: SAMPLE,
    log: opts.log,
  });
  let rows = 0;
  try {
    const csv = out.payload.csv;
    if (csv) {
      for await (const _ of csv.chunks) {
      }
      rows = csv.count();
    } else for await (const batch of out.payload.batches) rows += batch.length;
  } finally {
    await out.close();
  }
  await stockPipes();
  return rows;
}
