import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { JsonPayload } from './payloads';
import { QUERY_SLOTS, querySlots } from './query-slots';
import { openTransform } from './transform';
import { exerciseTransforms } from './transform-exercise';

// DuckDB's calls run in libuv's pool of four threads, and so would a blocking open of a named
// pipe, which waits there until the other end opens. A transform used to hold three at once (its
// query, a record pipe's write end and its result's read end opening): three transforms in one
// process waited on each other for good, and a consumer that left a result halfway left a thread
// waiting in an open that nothing would ever answer. The pipes are now opened without blocking,
// and a process runs at most two queries fewer than the pool has threads (query-slots.ts): four
// transforms whose records were read from files (through the pool) also waited for good.

const dirs: string[] = [];
const dir = async () => {
  const d = await mkdtemp(join(tmpdir(), 'sluice-fifo-opens-'));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A JSON array of `n` records as an HTTP source's body. */
function records(n: number): JsonPayload {
  async function* chunks() {
    const enc = new TextEncoder();
    yield enc.encode('[');
    for (let i = 0; i < n; i += 1000) {
      const part = Array.from({ length: Math.min(1000, n - i) }, (_, k) =>
        JSON.stringify({ id: i + k, name: `name ${i + k} ${'x'.repeat(60)}` }),
      );
      yield enc.encode(`${i === 0 ? '' : ','}${part.join(',')}`);
    }
    yield enc.encode(']');
  }
  return { kind: 'json', batches: (async function* () {})(), array: { chunks: chunks(), count: () => n } };
}

/** `SELECT * FROM people` over `n` records, its records cut into a sample of 1,000 and pipes. */
const selectAll = async (slug: string, n: number) =>
  openTransform({
    slug,
    sql: 'SELECT * FROM people',
    inputs: [{ slug: 'people', payload: records(n) }],
    dir: await dir(),
    signal: new AbortController().signal,
    jsonSampleRecords: 1000,
  });

describe("a transform's named pipes and libuv's pool", () => {
  it('runs six transforms at once in one process, more than the pool has threads', async () => {
    const rows = await Promise.all(
      Array.from({ length: 6 }, async () => exerciseTransforms({ dir: await dir() })),
    );
    expect(rows).toEqual(Array(6).fill(6000));
  }, 60_000);

  it('runs six transforms at once whose records are read from a file through the pool', async () => {
    const file = join(await dir(), 'records.json');
    // More than the records read ahead of DuckDB (4 MiB): the file is still being read while
    // the queries run.
    const n = 100_000;
    await writeFile(
      file,
      `[${Array.from({ length: n }, (_, i) => JSON.stringify({ id: i, name: `name ${i} ${'x'.repeat(60)}` })).join(',')}]`,
    );
    const logged: string[] = [];
    const one = async () => {
      const out = await openTransform({
        log: (_, message) => logged.push(message),
        slug: 'spooled',
        sql: 'SELECT * FROM people',
        inputs: [
          {
            slug: 'people',
            payload: {
              kind: 'json',
              batches: (async function* () {})(),
              array: { chunks: createReadStream(file, { highWaterMark: 64 * 1024 }), count: () => n },
            },
          },
        ],
        dir: await dir(),
        signal: new AbortController().signal,
        jsonSampleRecords: 1000,
      });
      let lines = 0;
      for await (const chunk of out.payload.csv?.chunks ?? [])
        for (const byte of chunk as Uint8Array) if (byte === 0x0a) lines++;
      await out.close();
      return lines;
    };
    expect(await Promise.all(Array.from({ length: 6 }, one))).toEqual(Array(6).fill(n));
    // The step log says why a transform waited.
    expect(logged).toContain(
      `waiting for one of the ${QUERY_SLOTS} transform queries this process runs at once to end`,
    );
  }, 60_000);

  // Closing the database holds the event loop for a while (transform.ts): the result's end
  // reaches its consumer first, so a sink ends its COPY while the database closes.
  it("hands the result's end to its consumer before the database closes, then frees its query slot", async () => {
    const out = await selectAll('ends', 20_000);
    const held = querySlots().free;
    expect(held).toBeLessThan(QUERY_SLOTS);
    let lines = 0;
    for await (const chunk of out.payload.csv?.chunks ?? [])
      for (const byte of chunk as Uint8Array) if (byte === 0x0a) lines++;
    expect(lines).toBe(20_000);
    expect(querySlots().free).toBe(held);
    await out.close();
    expect(querySlots().free).toBe(held + 1);
  }, 60_000);

  it('leaves no thread waiting when the consumer leaves a result halfway, four times over', async () => {
    for (let round = 0; round < 4; round++) {
      const out = await selectAll('half', 60_000);
      const csv = out.payload.csv;
      expect(csv).toBeDefined();
      for await (const chunk of csv?.chunks ?? []) {
        expect(chunk.byteLength).toBeGreaterThan(0);
        break;
      }
      await out.close();
    }
    // Every thread is free again: three transforms at once still finish.
    const rows = await Promise.all(
      Array.from({ length: 3 }, async () => exerciseTransforms({ dir: await dir() })),
    );
    expect(rows).toEqual([6000, 6000, 6000]);
  }, 60_000);
});
