// The WAL a run writes on each store of `npm run bench:history`: does it grow with the history?
// Runs execute one at a time on one store, right after a checkpoint (so every page a run changes
// for the first time since then is written whole: a full-page image); the WAL position before
// and after gives the bytes, PostgreSQL's own WAL statistics the full-page images. WAL is the
// cluster's, so the stores take their turns, never together. The WAL of the target database's
// rows (`tick` inserts one) is in both stores' figures alike.
import { setTimeout as sleep } from 'node:timers/promises';
import { executeOnce, type Store } from './history-store';
import { sql } from './pipeline-support';

type Wal = { lsn: string; fpi: number };

// Every session flushes its WAL statistics within 10 s of going idle (PostgreSQL's
// PGSTAT_IDLE_INTERVAL): read after that, the count holds the runs' sessions' images too.
const SETTLE_MS = 11_000;

async function walNow(): Promise<Wal> {
  const [r] = await sql<{ lsn: string; fpi: string }>(
    'postgres',
    'select pg_current_wal_lsn()::text as lsn, wal_fpi::text as fpi from pg_stat_wal',
  );
  return { lsn: r.lsn, fpi: Number(r.fpi) };
}

async function walBetween(a: Wal, b: Wal): Promise<{ bytes: number; fpi: number }> {
  const [r] = await sql<{ d: string }>('postgres', 'select pg_wal_lsn_diff($2, $1)::text as d', [
    a.lsn,
    b.lsn,
  ]);
  return { bytes: Number(r.d), fpi: b.fpi - a.fpi };
}

/** Per store: `runs` runs executed after a checkpoint, and the WAL bytes and full-page images per run. */
export async function walPerRun(
  stores: Store[],
  runs: number,
  slug: (i: number) => string,
): Promise<{ store: string; bytes: number; fpi: number; from: string; to: string }[]> {
  const out: { store: string; bytes: number; fpi: number; from: string; to: string }[] = [];
  for (const s of stores) {
    await sql('postgres', 'checkpoint');
    await sleep(SETTLE_MS);
    const before = await walNow();
    for (let i = 0; i < runs; i++) await executeOnce(s, slug(i));
    await sleep(SETTLE_MS);
    const after = await walNow();
    const d = await walBetween(before, after);
    out.push({ store: s.name, bytes: d.bytes / runs, fpi: d.fpi / runs, from: before.lsn, to: after.lsn });
  }
  return out;
}
