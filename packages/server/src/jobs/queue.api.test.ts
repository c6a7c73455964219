import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore } from '../../../../test/support/fresh-store';
import { storeKind } from '../../../../test/support/stores';
import { openStore, type Store } from '../db/client';
import { openQueue, type Queue } from './queue';

// Workers sleep a whole poll interval between fetches; a new job must wake them at once: NOTIFY
// on commit (PostgreSQL, PGlite), a local signal for jobs sent outside a transaction, and a
// wake-all after the listening connection was lost. With a poll interval of ten minutes, a job
// that runs within the test's wait was woken, not polled.

const POLL_SECONDS = 600;

async function waitFor(check: () => boolean | Promise<boolean>, what: string) {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('queue wake-ups', () => {
  let fresh: Awaited<ReturnType<typeof freshStore>>;
  let store: Store;
  let producer: Queue;
  let consumer: Queue;
  let consumerStore: Store;
  const seen: number[] = [];

  beforeAll(async () => {
    fresh = await freshStore();
    const open = () =>
      openStore({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.env.SLUICE_DATA_DIR ?? '' });
    store = await open();
    producer = await openQueue(store, { pollSeconds: POLL_SECONDS, supervise: false });
    // PostgreSQL: the consumer is another "process" (own pool, own LISTEN connection).
    // PGlite belongs to one process, so producer and consumer share it.
    consumerStore = storeKind() === 'postgres' ? await open() : store;
    consumer =
      consumerStore === store
        ? producer
        : await openQueue(consumerStore, { pollSeconds: POLL_SECONDS, supervise: false });
    await consumer.work('events.retention', async (data: any) => {
      seen.push(data.n);
    });
  });

  afterAll(async () => {
    if (consumer !== producer) await consumer.stop();
    await producer.stop();
    if (consumerStore !== store) await consumerStore.close();
    await store.close();
    await fresh.drop();
  });

  it('runs a job sent outside a transaction without waiting for the poll', async () => {
    await producer.enqueue(null, 'events.retention', { n: 1 });
    await waitFor(() => seen.includes(1), 'job 1');
  });

  it('wakes on commit for a job sent inside a transaction, and never for a rolled back one', async () => {
    await store.db
      .transaction(async (tx) => {
        await producer.enqueue(tx, 'events.retention', { n: 2 });
        throw new Error('roll back');
      })
      .catch(() => {});
    await store.db.transaction(async (tx) => {
      await producer.enqueue(tx, 'events.retention', { n: 3 });
    });
    await waitFor(() => seen.includes(3), 'job 3');
    expect(seen).not.toContain(2);
  });

  // The embedded store has no connection to lose.
  if (storeKind() === 'postgres') {
    const listeners = `select pid from pg_stat_activity
      where datname = current_database() and query ilike 'listen %' and state = 'idle'`;
    it('re-listens after losing its connection and catches up', async () => {
      const before = (await store.executeSql(listeners)).rows.map((r) => r.pid);
      expect(before.length).toBe(1);
      await store.executeSql('select pg_terminate_backend($1)', [before[0]]);
      // Sent while nobody listens: only the wake-all after reconnecting can find it.
      await producer.enqueue(null, 'events.retention', { n: 4 });
      await waitFor(() => seen.includes(4), 'job 4');
      await waitFor(async () => {
        const now = (await store.executeSql(listeners)).rows.map((r) => r.pid);
        return now.length === 1 && now[0] !== before[0];
      }, 'a new listening connection');
      await producer.enqueue(null, 'events.retention', { n: 5 });
      await waitFor(() => seen.includes(5), 'job 5');
    });
  }
});
