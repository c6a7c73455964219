import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Canceled } from './meter';
import type { JsonPayload } from './payloads';
import { openTransform } from './transform';

// DuckDB forgets an interrupt when its next statement starts, so a cancel that lands while no
// statement runs (before the query starts, or while its call waits for a thread) must not be
// lost: the query would then run for as long as it takes. The first case ran for minutes before
// transform.ts sent the interrupt again until the database closed (CI saw it as a transform-host
// test timing out: its cancel landed while the query's call waited for a thread).

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const twoRecords = (): JsonPayload => ({
  kind: 'json',
  batches: (async function* () {
    yield [{ id: 1 }, { id: 2 }];
  })(),
});

// Minutes unless stopped.
const SLOW = 'SELECT (SELECT count(*) FROM range(100000000000)) AS n, id FROM people';

async function open(sql: string, signal: AbortSignal) {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-transform-cancel-'));
  dirs.push(dir);
  return openTransform({ slug: 't', sql, inputs: [{ slug: 'people', payload: twoRecords() }], dir, signal });
}

async function drain(out: Awaited<ReturnType<typeof openTransform>>) {
  if (out.payload.csv) for await (const _ of out.payload.csv.chunks);
  else for await (const _ of out.payload.batches);
}

describe('canceling a transform', () => {
  it('cancels a query that starts after the abort', async () => {
    const cancel = new AbortController();
    const out = await open(SLOW, cancel.signal);
    cancel.abort();
    await expect(drain(out)).rejects.toBeInstanceOf(Canceled);
    await out.close();
  }, 20_000);

  it('cancels a query under way, and closing after it returns', async () => {
    const cancel = new AbortController();
    const out = await open(SLOW, cancel.signal);
    const draining = drain(out);
    draining.catch(() => {});
    await new Promise((r) => setTimeout(r, 300));
    cancel.abort();
    await expect(draining).rejects.toBeInstanceOf(Canceled);
    await out.close();
  }, 20_000);

  it('closes a transform whose consumer left while its query ran', async () => {
    const out = await open(SLOW, new AbortController().signal);
    const draining = drain(out);
    draining.catch(() => {});
    await new Promise((r) => setTimeout(r, 300));
    await out.close();
  }, 20_000);
});
