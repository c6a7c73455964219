import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { appendRest, JSON_SAMPLE_RECORDS, type StreamedInput, sampleArray, streamArray } from './duck-stream';
import { appendCell, bigintsAsText, duckType } from './duck-values';
import type { Payload } from './payloads';
import { RunError } from './run-error';

// A transform's inputs on their way into DuckDB, in two parts. Staging needs no DuckDB: the
// bytes of JSON and CSV inputs go to files in the step's directory while the native module and
// the database are still starting. Loading then makes each input a table named by its step's
// slug; DuckDB parses the files itself, in parallel, and no record is decoded in JavaScript.

type Duck = typeof import('@duckdb/node-api');

export type InputLog = (level: 'info' | 'warn', message: string) => void;

/**
 * Makes the staged input a table (or a view the query reads while the input arrives: `stream`);
 * `columnless` when the input had no columns (it was empty). `wholeLoad` is awaited before a
 * large input is parsed whole (the transform then gives DuckDB its loading threads).
 */
export type LoadInput = (d: Duck, conn: DuckDBConnection, wholeLoad: () => Promise<void>) => Promise<Loaded>;
export type Loaded = { columnless: boolean; stream?: StreamedInput };

/** An input that is a JSON records array: streamed into the query, read on one thread (duck-stream.ts). */
export const streamable = (payload: Payload) => payload.kind === 'json' && payload.array !== undefined;

export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

async function writeFile(source: AsyncIterable<string | Uint8Array>, file: string) {
  await pipeline(Readable.from(source, { objectMode: false }), createWriteStream(file));
}

async function* ndjson(batches: AsyncIterable<unknown[]>) {
  for await (const b of batches)
    if (b.length > 0) yield `${b.map((r) => JSON.stringify(r, bigintsAsText)).join('\n')}\n`;
}

const columnless =
  (table: string, type: string): LoadInput =>
  async (_d, conn) => {
    await conn.run(`CREATE TABLE ${table} (value ${type})`);
    return { columnless: true };
  };

const fromFile =
  (table: string, read: string): LoadInput =>
  async (_d, conn) => {
    await conn.run(`CREATE TABLE ${table} AS SELECT * FROM ${read}`);
    return { columnless: false };
  };

/**
 * Stages one input: byte inputs are written to their file before this resolves; rows are
 * appended while they arrive, so their loader reads the stream itself.
 */
export async function stageInput(
  input: { slug: string; payload: Payload },
  dir: string,
  log: InputLog,
  /** Records of a JSON array DuckDB detects its columns on (tests make it small). */
  sample = JSON_SAMPLE_RECORDS,
): Promise<LoadInput> {
  const { slug, payload } = input;
  const table = ident(slug);
  switch (payload.kind) {
    case 'rows':
      return async (d, conn, wholeLoad) => {
        if (payload.columns.length === 0) {
          for await (const _ of payload.batches) {
          }
          return columnless(table, 'VARCHAR')(d, conn, wholeLoad);
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
        return { columnless: false };
      };
    case 'json': {
      if (payload.array) {
        // The source's bytes of the records array, one record per line (json-lines.ts): DuckDB
        // detects the columns on the first records and reads the rest while they arrive.
        const what = `the records array of ${slug}`;
        const sampled = await sampleArray(payload.array, join(dir, `${slug}.records.ndjson`), sample, what);
        const whole = fromFile(
          table,
          `read_json_auto(${literal(sampled.file)}, format = 'newline_delimited')`,
        );
        if (sampled.complete) {
          const records = sampled.count();
          log(
            'info',
            `DuckDB reads the JSON records of ${slug} directly from the source's bytes (${records} records)`,
          );
          if (records === 0) return columnless(table, 'JSON');
          return whole;
        }
        return async (d, conn, wholeLoad) => {
          const stream = await streamArray(conn, table, sampled, dir, slug);
          if (stream) {
            log(
              'info',
              `DuckDB reads the JSON records of ${slug} while they arrive (columns from the first ${sample})`,
            );
            return { columnless: false, stream };
          }
          log('info', `DuckDB loads the JSON records of ${slug} whole: its columns need its own detection`);
          await appendRest(sampled);
          await wholeLoad();
          return whole(d, conn, wholeLoad);
        };
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
      if (records === 0) return columnless(table, 'JSON');
      return fromFile(table, `read_json_auto(${literal(file)}, format = 'newline_delimited')`);
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
      if (bytes === 0) return columnless(table, 'VARCHAR');
      return fromFile(
        table,
        `read_csv_auto(${literal(file)}, delim = ${literal(payload.delimiter)}, header = ${payload.header})`,
      );
    }
    default:
      throw new RunError(
        'TRANSFORM_FAILED',
        `input ${slug} is a ${payload.kind} payload; a transform reads rows, JSON or CSV`,
      );
  }
}
