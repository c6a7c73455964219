import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SPARE_PIPES, stopSparePipes } from './fifos';
import { exerciseTransforms } from './transform-exercise';

// A worker's warm start runs one transform on made-up records (docs/operations.md#a-workers-warm-start).

describe('the transform exercise', () => {
  const root = join(tmpdir(), `sluice-exercise-test-${process.pid}`);
  afterAll(async () => {
    await stopSparePipes();
    await rm(root, { recursive: true, force: true });
  });

  it('streams every made-up record through DuckDB to COPY CSV and leaves the spare pipes made', async () => {
    const dir = await mkdtemp(`${root}-run-`);
    const pipes = join(root, 'pipes');
    try {
      const lines: string[] = [];
      expect(await exerciseTransforms({ dir, pipeDir: pipes, log: (_, m) => lines.push(m) })).toBe(6000);
      // The way an HTTP source's records take to a SQL sink: streamed in, CSV out through a pipe.
      expect(lines).toEqual([
        'DuckDB reads the JSON records of records while they arrive (columns from the first 1000)',
        'DuckDB wrote the result as CSV for COPY (6000 rows, through a pipe)',
      ]);
      const spares = await readdir(pipes);
      expect(spares.length).toBe(SPARE_PIPES);
      for (const f of spares) expect((await lstat(join(pipes, f))).isFIFO()).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
