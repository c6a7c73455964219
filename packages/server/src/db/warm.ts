import type pg from 'pg';

// A pool that stays open and warm (docs/benchmarks.md "Warm pools"). A newly opened PostgreSQL
// backend loads its catalog caches (every relation, index, type, function and operator a statement
// names) on its first statements: under load that made every statement of the first burst on a new
// backend 100–300 ms, while a dozen backends started at once. So the pool is opened to its floor
// when the process starts, idle timeouts never take it below that floor (pg-pool's `min`), and
// each connection is warmed before the burst needs it: every statement this process has sent under
// a name (the run path's, db/named.ts) is planned on it once through EXPLAIN, which parses and
// plans without running anything and leaves nothing behind on the session (the named statement
// itself is still prepared by its first real use, now on warm caches). Behind a transaction pooler
// the same EXPLAIN reaches one of the pooler's server connections and warms that one.

/** Distinct statement texts kept to warm new connections with (the run path has a handful). */
const MAX_TEXTS = 64;
/** How soon after a new text or a new connection the idle connections are warmed. */
const WARM_DELAY_MS = 20;
/** How soon a lost connection below the floor is opened again, and the longest wait between tries. */
const REFILL_MS = 1000;
const MAX_REFILL_MS = 30_000;

/** A statement as the pool sends it under a name (db/named.ts). */
export type NamedText = { name: string; text: string };

export type PoolWarmer = {
  /** Records a statement text sent under a name; the idle connections are warmed with it soon. */
  named(name: string, text: string): void;
  /**
   * Opens the pool to `min` connections, each warmed with what is known so far and with
   * `statements` (a process's hot statements, known before their first use: a worker's, before
   * it takes work), and warms the connections already open with them too.
   */
  open(min: number, statements?: NamedText[]): Promise<void>;
};

/** `$1` … `$n` of a statement: EXPLAIN is bound with as many nulls. */
function paramCount(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/\$(\d+)/g)) n = Math.max(n, Number(m[1]));
  return n;
}

export function poolWarmer(pool: pg.Pool): PoolWarmer {
  const names = new Set<string>();
  const texts: string[] = [];
  // How many of `texts` each connection was warmed with.
  const warmed = new WeakMap<pg.PoolClient, number>();
  let timer: NodeJS.Timeout | null = null;
  let warming: Promise<void> | null = null;
  let again = false;

  const warm = async (client: pg.PoolClient) => {
    const to = texts.length;
    for (let k = warmed.get(client) ?? 0; k < to; k++) {
      // A statement waiting for a connection goes first: this one goes back to the pool between
      // two EXPLAINs, behind, and learns the rest once it is idle again (its release schedules
      // that). Each new text named had every idle connection held for the whole list, so a
      // statement that needed one meanwhile waited for all of it.
      if (pool.waitingCount > 0) return;
      warmed.set(client, k + 1);
      const text = texts[k];
      // A statement EXPLAIN refuses (or a connection lost meanwhile) is left to its real use.
      await client.query(`explain ${text}`, new Array(paramCount(text)).fill(null)).catch(() => {});
    }
  };
  const behind = (client: pg.PoolClient) => (warmed.get(client) ?? 0) < texts.length;
  /**
   * Takes `n` connections at once, and gives each back as soon as `fn` is done with it (one that
   * lost its server meanwhile is dropped: its error is ours while we hold it, not the process's).
   */
  const warmEach = async (n: number, fn: (c: pg.PoolClient) => Promise<void>) => {
    const taken = await Promise.allSettled(Array.from({ length: n }, () => pool.connect()));
    await Promise.all(
      taken.map(async (t) => {
        if (t.status === 'rejected') return;
        const c = t.value;
        let lost: Error | undefined;
        const onError = (err: Error) => {
          lost = err;
        };
        c.on('error', onError);
        try {
          await fn(c);
        } finally {
          c.off('error', onError);
          c.release(lost);
        }
      }),
    );
    const failed = taken.find((t) => t.status === 'rejected');
    if (failed) throw failed.reason;
  };

  // The idle connections taken at once (pg-pool hands out the last returned first, so one at a
  // time would give the same one back), each returned as soon as it is warm.
  const warmIdle = async () => {
    const n = pool.idleCount;
    if (n === 0 || pool.waitingCount > 0) return;
    await warmEach(n, (c) => (behind(c) ? warm(c) : Promise.resolve()));
  };
  const schedule = () => {
    if (warming) again = true;
    if (timer || warming) return;
    timer = setTimeout(() => {
      timer = null;
      warming = warmIdle()
        .catch(() => {})
        .finally(() => {
          warming = null;
          if (again) {
            again = false;
            schedule();
          }
        });
    }, WARM_DELAY_MS);
    timer.unref();
  };
  // A connection opened on demand (above the floor, or in place of a lost one) is warmed once it
  // is idle.
  pool.on('release', (err: Error | undefined, client: pg.PoolClient) => {
    if (!err && behind(client)) schedule();
  });

  // Connections lost (a database restart, a server closing idle sessions) are opened again, warm,
  // until the floor holds: after a second, then at a growing interval while the server refuses.
  let floor = 0;
  let refill: NodeJS.Timeout | null = null;
  let refillMs = REFILL_MS;
  const ended = () => pool.ending || pool.ended;
  const refillSoon = () => {
    if (refill || ended() || pool.totalCount >= floor) return;
    refill = setTimeout(() => {
      refill = null;
      if (ended()) return;
      open(floor).then(
        () => {
          refillMs = REFILL_MS;
        },
        () => {
          refillMs = Math.min(refillMs * 2, MAX_REFILL_MS);
          refillSoon();
        },
      );
    }, refillMs);
    refill.unref();
  };
  pool.on('remove', refillSoon);

  /** Adds a text to warm with; false when it is known already (or there are enough). */
  const record = (name: string, text: string) => {
    if (names.has(name) || texts.length >= MAX_TEXTS) return false;
    names.add(name);
    texts.push(text);
    return true;
  };

  async function open(min: number, statements: NamedText[] = []) {
    floor = Math.max(floor, min);
    for (const s of statements) record(s.name, s.text);
    const opened = pool.totalCount;
    // pg-pool hands out its idle connections before it opens new ones: to open the missing ones,
    // the idle ones are taken too (a pool that already held one idle connection ended a floor of
    // three at two).
    const missing = Math.max(0, min - opened);
    await warmEach(missing > 0 ? missing + pool.idleCount : 0, warm);
    // The connections open before (a floor opened earlier) learn the new texts now, not after a
    // first run has used them on cold caches.
    if (statements.length > 0 && opened > 0) await warmIdle();
  }

  return {
    named(name, text) {
      if (record(name, text)) schedule();
    },
    open,
  };
}
