import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore } from '../../../../test/support/fresh-store';
import { storeKind } from '../../../../test/support/stores';
import { openStore, type Store } from '../db/client';
import { jobDefinitions } from './catalog';
import { JOBS_CHANNEL, openQueue, type Queue } from './queue';

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
  // Every statement the consumer's queue sends outside a transaction (the store, watched).
  const sent: string[] = [];
  const watched = (s: Store): Store => ({
    ...s,
    executeSql: (text, values) => {
      sent.push(text);
      return s.executeSql(text, values);
    },
  });

  beforeAll(async () => {
    fresh = await freshStore();
    const open = () =>
      openStore({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.env.SLUICE_DATA_DIR ?? '' });
    store = await open();
    producer = await openQueue(store, { pollSeconds: POLL_SECONDS, supervise: false, jobs: jobDefinitions });
    // PostgreSQL: the consumer is another "process" (own pool, own LISTEN connection).
    // PGlite belongs to one process, so producer and consumer share it.
    consumerStore = storeKind() === 'postgres' ? await open() : store;
    consumer =
      consumerStore === store
        ? producer
        : await openQueue(watched(consumerStore), {
            pollSeconds: POLL_SECONDS,
            supervise: false,
            jobs: jobDefinitions,
          });
    await consumer.work('events.retention', async (data: any, job) => {
      if (data.slow) await new Promise((r) => setTimeout(r, 30));
      if (data.mode === 'tx') {
        await consumerStore.db.transaction(async (tx) => {
          await consumer.complete(tx, 'events.retention', job.id);
        });
      }
      if (data.mode === 'throw') throw new Error('handler failed');
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

  it('runs a burst larger than its slots without waiting for the poll', async () => {
    // One slot: each job's end must fetch again while more wait, though no new notification
    // arrives (they all came at once, while the slot was busy).
    await store.db.transaction(async (tx) => {
      for (let n = 10; n < 16; n++) await producer.enqueue(tx, 'events.retention', { n, slow: true });
    });
    await waitFor(() => [10, 11, 12, 13, 14, 15].every((n) => seen.includes(n)), 'the burst');
  });

  const stateOf = async (id: string | null) =>
    (await store.executeSql('select state from pgboss.job where id = $1', [id])).rows[0]?.state;

  it("completes a job once: in its handler's transaction, or after the handler; fails a thrown one", async () => {
    const from = sent.length;
    const inTx = await producer.enqueue(null, 'events.retention', { n: 20, mode: 'tx' });
    const after = await producer.enqueue(null, 'events.retention', { n: 21 });
    const thrown = await producer.enqueue(null, 'events.retention', { n: 22, mode: 'throw' });
    await waitFor(() => seen.includes(20) && seen.includes(21), 'jobs 20 and 21');
    // events.retention retries a failed job (after a minute).
    await waitFor(async () => (await stateOf(thrown)) === 'retry', 'job 22 to fail');
    await waitFor(async () => (await stateOf(after)) === 'completed', 'job 21 to complete');
    expect(await stateOf(inTx)).toBe('completed');
    if (consumer !== producer) {
      // Job 21's completion was sent after its handler; job 20's only inside its transaction.
      const completions = sent.slice(from).filter((t) => /state = 'completed'/.test(t));
      expect(completions).toHaveLength(1);
    }
  });

  // The embedded store has no connection to lose.
  if (storeKind() === 'postgres') {
    const listeners = `select pid from pg_stat_activity
      where datname = current_database() and query ilike 'listen %' and state = 'idle'`;
    /** A second worker (its own pool and LISTEN) on the same store; `close` stops it and its pool. */
    const openPeer = async () => {
      const peerStore = await openStore({ databaseUrl: fresh.env.DATABASE_URL, dataDir: '' });
      const peer = await openQueue(peerStore, {
        pollSeconds: POLL_SECONDS,
        supervise: false,
        jobs: jobDefinitions,
      });
      const close = async () => {
        await peer.stop();
        await peerStore.close();
      };
      return { peer, close };
    };
    /** Until two workers have said `here` among the notifications `heard`. */
    const bothHere = (heard: string[]) =>
      waitFor(() => new Set(heard.filter((p) => p.startsWith('here:'))).size === 2, 'both here');
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

    it("announces jobs inserted by a caller's own statement with it", async () => {
      const heard: string[] = [];
      const unlisten = await store.listen(JOBS_CHANNEL, (p) => {
        if (p) heard.push(p);
      });
      try {
        const insert = async (ns: number[]) => {
          const jobs = ns.map((n) => producer.insertion('events.retention', { n }));
          const ctes = jobs.map((job, i) => sql`, j${sql.raw(String(i))} as (${job.sql(sql.raw('one'))})`);
          await store.db.execute(sql`with one as (select 1)${sql.join(ctes, sql.raw(''))} select 1`);
          for (const job of jobs) job.sent();
        };
        await insert([59, 60]);
        // The consumer is another process: only the announcements can wake it before its poll.
        await waitFor(() => [59, 60].every((n) => seen.includes(n)), 'jobs 59 and 60');
        // One statement, one commit, one announcement per job: each carries its own sequence
        // number (which worker answers first), so PostgreSQL does not fold them into one.
        const announced = heard.filter((p) => /^events\.retention:1:/.test(p));
        expect(announced).toHaveLength(2);
        expect(new Set(announced.map((p) => p.split(':')[3])).size).toBe(2);
      } finally {
        await unlisten();
      }
    });

    // A NOTIFY costs a server-wide lock through its commit and wakes every worker
    // (docs/scaling.md): a job's announcement names the one worker that answers it, and nothing
    // is said when a job is taken.
    it('names one worker per announcement among those that say `here` and `bye`; never says `taken`', async () => {
      const heard: string[] = [];
      const unlisten = await store.listen(JOBS_CHANNEL, (p) => {
        if (p) heard.push(p);
      });
      try {
        const taken = () => heard.filter((p) => p.startsWith('taken:'));
        await producer.enqueue(null, 'events.retention', { n: 30 });
        await waitFor(() => seen.includes(30), 'job 30');
        await producer.enqueue(null, 'events.retention', { n: 31 });
        await waitFor(() => seen.includes(31), 'job 31');
        expect(heard.filter((p) => /^events\.retention:1:[^:]+:\d+$/.test(p))).toHaveLength(2);

        // A second worker (its own pool and LISTEN): both say `here`, each learns of the other,
        // and the announcements are shared between them.
        const { peer, close } = await openPeer();
        const byPeer: number[] = [];
        try {
          await peer.work('events.retention', async (data: any) => {
            byPeer.push(data.n);
            seen.push(data.n);
          });
          await bothHere(heard);
          for (let n = 40; n < 48; n++) await producer.enqueue(null, 'events.retention', { n });
          await waitFor(() => [40, 41, 42, 43, 44, 45, 46, 47].every((n) => seen.includes(n)), 'jobs 40–47');
          // Each ran once, and each worker was named for some of them.
          expect(seen.filter((n) => n >= 40 && n < 48)).toHaveLength(8);
          expect(byPeer.length).toBeGreaterThan(0);
          expect(byPeer.length).toBeLessThan(8);
        } finally {
          await close();
        }
        await waitFor(() => heard.some((p) => p.startsWith('bye:')), 'the peer leaving');
        // Alone again: every announcement is this worker's.
        await producer.enqueue(null, 'events.retention', { n: 50 });
        await waitFor(() => seen.includes(50), 'job 50');
        expect(taken()).toEqual([]);
      } finally {
        await unlisten();
      }
    });

    // A job named to a worker that is busy goes to one with a free slot, long before the poll: the
    // free worker, having heard it named to another, looks READY_CHECK_MS later whether it still
    // waits (jobs/queue-consumers.ts).
    it('hands a job named to a busy worker to a free one with a ready check', async () => {
      const heard: string[] = [];
      const unlisten = await store.listen(JOBS_CHANNEL, (p) => {
        if (p) heard.push(p);
      });
      const readyChecks = () => sent.filter((t) => /^\s*select q\.name from unnest/.test(t)).length;
      const { peer, close } = await openPeer();
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let holding: number | null = null;
      const byPeer: number[] = [];
      try {
        await peer.work('events.retention', async (data: any) => {
          if (data.hold) {
            holding = data.n;
            await held;
          }
          byPeer.push(data.n);
          seen.push(data.n);
        });
        await bothHere(heard);

        // The peer busy: a job it holds. The consumer answers every other announcement, and may
        // take the peer's too with the fetch it makes after each job (one slot, which was full).
        for (let n = 90; holding === null; n++) {
          expect(n).toBeLessThan(90 + 20);
          await producer.enqueue(null, 'events.retention', { n, hold: true });
          await waitFor(() => seen.includes(n) || holding === n, `job ${n}`);
        }
        // Announcements alternate between the two: one of these is named to the busy peer. Each
        // is sent once the consumer is idle again (its job completed, its next fetch made), so
        // that it hears the peer's with a free slot; the check follows 150 ms after.
        const checksBefore = readyChecks();
        for (const n of [120, 121]) {
          await new Promise((r) => setTimeout(r, 100));
          await producer.enqueue(null, 'events.retention', { n });
          await waitFor(() => seen.includes(n), `job ${n}`);
        }
        expect(byPeer).toEqual([]);
        await waitFor(() => readyChecks() > checksBefore, 'a ready check');
        release();
        await waitFor(() => byPeer.length === 1, 'the held job');
      } finally {
        release();
        await close();
        await unlisten();
      }
    });
  }
});
