import { createReadStream, createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import type { FilePayload, FormField, Payload } from './payloads';

// A payload read by several steps is written to the run's directory once and replayed to each
// of them: rows and JSON as NDJSON, CSV and files as their bytes. Disk, not memory, holds it.

const BATCH = 1000;

/** Splits a byte stream into lines, one array per chunk read. */
export async function* lineBatches(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const c of chunks) {
    rest += typeof c === 'string' ? c : decoder.write(c as Buffer);
    const parts = rest.split('\n');
    rest = parts.pop()!;
    if (parts.length > 0) yield parts;
  }
  rest += decoder.end();
  if (rest.length > 0) yield [rest];
}

const bigintsAsText = (_k: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

// Row cells keep their JS type through the spool: every object cell is tagged, so a tag can
// never be confused with a value.
function encodeCell(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return { $: 'n', v: v.toString() };
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : { $: 'd', v: v.toISOString() };
  if (v instanceof Uint8Array)
    return { $: 'b', v: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
  if (typeof v === 'object') return { $: 'j', v };
  return v;
}

function decodeCell(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  const { $: tag, v: x } = v as { $: string; v: unknown };
  if (tag === 'n') return BigInt(x as string);
  if (tag === 'd') return new Date(x as string);
  if (tag === 'b') return new Uint8Array(Buffer.from(x as string, 'base64'));
  return x;
}

async function* encodeBatches(batches: AsyncIterable<unknown[]>, line: (item: unknown) => string) {
  for await (const batch of batches) {
    if (batch.length > 0) yield `${batch.map(line).join('\n')}\n`;
  }
}

async function* decodeBatches<T>(file: string, parse: (line: string) => T): AsyncGenerator<T[]> {
  let out: T[] = [];
  for await (const lines of lineBatches(createReadStream(file))) {
    for (const l of lines) {
      if (l.length === 0) continue;
      out.push(parse(l));
      if (out.length >= BATCH) {
        yield out;
        out = [];
      }
    }
  }
  if (out.length > 0) yield out;
}

/** A file's bytes, opened only when someone reads them. */
const lazyFile = (file: string): AsyncIterable<Uint8Array> => ({
  [Symbol.asyncIterator]: () => createReadStream(file)[Symbol.asyncIterator](),
});

const writeAll = (source: AsyncIterable<string | Uint8Array>, file: string) =>
  pipeline(Readable.from(source, { objectMode: false }), createWriteStream(file));

async function spoolFile(p: FilePayload, file: string): Promise<() => FilePayload> {
  await writeAll(p.chunks, file);
  return () => ({ ...p, chunks: lazyFile(file) });
}

/**
 * Consumes the payload into files under `prefix` and returns a function that gives a fresh
 * replay of it on each call.
 */
export async function spoolPayload(p: Payload, prefix: string): Promise<() => Payload> {
  switch (p.kind) {
    case 'rows': {
      const file = `${prefix}.rows.ndjson`;
      const line = (row: unknown) => JSON.stringify((row as unknown[]).map(encodeCell), bigintsAsText);
      await writeAll(encodeBatches(p.batches, line), file);
      const parse = (l: string) => (JSON.parse(l) as unknown[]).map(decodeCell);
      return () => ({ kind: 'rows', columns: p.columns, batches: decodeBatches(file, parse) });
    }
    case 'json': {
      const file = `${prefix}.json.ndjson`;
      await writeAll(
        encodeBatches(p.batches, (r) => JSON.stringify(r, bigintsAsText) ?? 'null'),
        file,
      );
      return () => ({ kind: 'json', batches: decodeBatches(file, (l) => JSON.parse(l) as unknown) });
    }
    case 'csv': {
      const file = `${prefix}.csv`;
      await writeAll(p.chunks, file);
      return () => ({ ...p, chunks: lazyFile(file) });
    }
    case 'file': {
      const replay = await spoolFile(p, `${prefix}.bin`);
      return replay;
    }
    case 'form': {
      const fields: (() => FormField)[] = [];
      for (const [i, f] of p.fields.entries()) {
        if ('file' in f) {
          const replay = await spoolFile(f.file, `${prefix}.field-${i}.bin`);
          fields.push(() => ({ name: f.name, file: replay() }));
        } else fields.push(() => f);
      }
      return () => ({ ...p, fields: fields.map((f) => f()) });
    }
  }
}
