import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { JsonPayload } from './payloads';
import { openTransform } from './transform';
import { exerciseTransforms } from './transform-exercise';

// DuckDB's calls run in libuv's pool of four threads, and so would a blocking open of a named
// pipe, which waits there until the other end opens. A transform used to hold three at once (its
// query, a record pipe's write end and its result's read end opening): three transforms in one
// process waited on each other for good, and a consumer that left a result halfway left a thread
// waiting in an open that nothing would ever answer. The pipes are now opened without blocking.

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

describe("a transform's named pipes and libuv's pool", () => {
  it('runs six transforms at once in one process, more than the pool has threads', async () => {
    const rows = await Promise.all(
      Array.from({ length: 6 }, async () => exerciseTransforms({ dir: await dir() })),
    );
    expect(rows).toEqual(Array(6).fill(6000));
  }, 60_000);

  it('leaves no thread waiting when the consumer leaves a result halfway, four times over', async () => {
    for (let round = 0; round < 4; round++) {
      const out = await openTransform({
        slug: 'half',
        sql: 'SELECT * FROM people',
        inputs: [{ slug: 'people', payload: records(60_000) }],
        dir: await dir(),
        signal: new AbortController().signal,
        jsonSampleRecords: 1000,
      });
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
