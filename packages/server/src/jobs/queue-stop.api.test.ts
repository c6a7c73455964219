import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore } from '../../../../test/support/fresh-store';
import { openStore, type Store } from '../db/client';
import { jobDefinitions } from './catalog';
import { openQueue } from './queue';

// A stopping queue must let the job in hand end and its completion land before it resolves:
// the store closes right after, and pg-boss sends completions without awaiting them (a late
// one used to fail with "Cannot use a pool after calling end on the pool").

async function waitFor(check: () => boolean, what: string) {
  for (let i = 0; i < 600; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('queue stop', () => {
  let fresh: Awaited<ReturnType<typeof freshStore>>;
  let store: Store;

  beforeAll(async () => {
    fresh = await freshStore();
    store = await openStore({
      databaseUrl: fresh.env.DATABASE_URL,
      dataDir: fresh.env.SLUICE_DATA_DIR ?? '',
    });
  });

  afterAll(async () => {
    await store.close();
    await fresh.drop();
  });

  it('waits for the job in hand and its completion, and fetches nothing more', async () => {
    const queue = await openQueue(store, { pollSeconds: 600, supervise: false, jobs: jobDefinitions });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const started: number[] = [];
    const errors: unknown[] = [];
    await queue.work('events.retention', async (data: any) => {
      started.push(data.n);
      await gate;
      // The store is still open while a handler runs during the stop.
      await store.executeSql('select 1').catch((err) => errors.push(err));
    });
    const first = await queue.enqueue(null, 'events.retention', { n: 1 });
    await waitFor(() => started.includes(1), 'the job to start');

    let stopped = false;
    const stopping = queue.stop().then(() => {
      stopped = true;
    });
    await queue.enqueue(null, 'events.retention', { n: 2 }).catch(() => null);
    await new Promise((r) => setTimeout(r, 200));
    expect(stopped).toBe(false);
    release();
    await stopping;

    expect(errors).toEqual([]);
    expect(started).toEqual([1]);
    const { rows } = await store.executeSql('select state from pgboss.job where id = $1', [first]);
    expect(rows[0]?.state).toBe('completed');
  });
});
