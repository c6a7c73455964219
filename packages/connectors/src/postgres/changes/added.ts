import type pg from 'pg';
import type { CapturedTable, RowShape } from './catalog';
import type { CaptureCursor } from './cursor';
import { copyTables } from './snapshot';

// A table that joins the capture after its initial snapshot (a new pipeline version lists it;
// docs/cdc.md "Changing the captured tables"): with `snapshot: initial` its current rows are
// copied once, in the run that adds it to the publication, the other tables untouched.

/** The operation's tables the committed position did not cover yet. */
export function addedTables(from: CaptureCursor, tables: CapturedTable[]): CapturedTable[] {
  return tables.filter((t) => !from.tables.includes(t.name));
}

/**
 * Copies `added` whole as `insert` rows, in one REPEATABLE READ transaction begun after the
 * publication lists them: every change from then on is in the slot, so the changes this run reads
 * next (up to its end marker, later than the copy) bring each row to its state at that marker.
 */
export async function* copyAddedTables(
  client: pg.Client,
  added: CapturedTable[],
  shape: RowShape,
): AsyncGenerator<unknown[][]> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const r = await client.query<{ lsn: string; at: string }>(
      `SELECT pg_catalog.pg_current_wal_lsn()::text AS lsn,
              to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at`,
    );
    const copy = copyTables(
      client,
      added,
      shape,
      { position: r.rows[0].lsn, committedAt: r.rows[0].at },
      { from: { table: 0, key: null }, to: null, budget: Number.POSITIVE_INFINITY, timeUp: () => false },
    );
    yield* copy.batches;
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
