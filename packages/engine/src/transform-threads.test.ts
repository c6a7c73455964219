import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Payload } from './payloads';
import { openTransform } from './transform';

// A transform's database starts with one thread when its inputs all stream in (JSON records
// arrays), and with its loading threads otherwise (transform.ts). Whichever way it started, and
// whichever way each input was loaded, the query itself runs on one thread.

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const bytes = (text: string) =>
  (async function* () {
    yield Buffer.from(text);
  })();

/** A JSON array of `n` records, as a source with the response's bytes hands it over. */
function jsonArray(n: number, day: (i: number) => string): Payload {
  const records = Array.from({ length: n }, (_, k) => JSON.stringify({ id: k + 1, day: day(k + 1) }));
  return {
    kind: 'json',
    batches: (async function* () {})(),
    array: { chunks: bytes(`[${records.join(',')}]`), count: () => n },
  };
}

const csv = (n: number): Payload => ({
  kind: 'csv',
  delimiter: ',',
  header: true,
  chunks: bytes(
    `id,day\n${Array.from({ length: n }, (_, k) => `${k + 1},2024-01-0${(k % 9) + 1}`).join('\n')}\n`,
  ),
});

async function run(payload: Payload) {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-transform-threads-'));
  dirs.push(dir);
  const logs: string[] = [];
  const out = await openTransform({
    slug: 't',
    sql: "SELECT current_setting('threads') AS threads, count(*) AS n, min(day)::VARCHAR AS first FROM people",
    inputs: [{ slug: 'people', payload }],
    dir,
    signal: new AbortController().signal,
    jsonSampleRecords: 4,
    log: (_level, message) => logs.push(message),
  });
  const rows: unknown[][] = [];
  try {
    for await (const batch of out.payload.batches) rows.push(...batch);
  } finally {
    await out.close();
  }
  return { rows, logs };
}

describe('the threads of a transform', () => {
  it('runs the query on one thread over records streamed into it', async () => {
    const r = await run(jsonArray(40, (i) => `2024-02-${String((i % 28) + 1).padStart(2, '0')}`));
    expect(r.logs).toContain(
      'DuckDB reads the JSON records of people while they arrive (columns from the first 4)',
    );
    expect(r.rows).toEqual([[1, 40, '2024-02-01']]);
  });

  it('runs it on one thread after an input was loaded whole with the loading threads', async () => {
    // A month-first date: only DuckDB's own detection reads it, so the records load whole.
    const r = await run(jsonArray(40, (i) => `0${(i % 9) + 1}-1${i % 10}-2024`));
    expect(r.logs).toContain(
      'DuckDB loads the JSON records of people whole: its columns need its own detection',
    );
    expect(r.rows).toEqual([[1, 40, '2024-01-16']]);
  });

  it('runs it on one thread over a CSV input', async () => {
    const r = await run(csv(40));
    expect(r.rows).toEqual([[1, 40, '2024-01-01']]);
  });
});
