import type pg from 'pg';
import type { CapturedTable, RowShape } from './catalog';
import { q } from './catalog';
import type { SnapshotProgress } from './cursor';

// The initial copy of the captured tables (docs/cdc.md "Snapshot"): table by table in key
// order behind a server-side cursor, a batch at a time, inside the caller's REPEATABLE READ
// transaction (the slot's exported snapshot on the first run). A run copies at most its
// budget of rows and stops after a whole key, so the next run goes on after the last key.

const BATCH = 5000;
const CURSOR = 'sluice_cdc_snapshot';

export type SnapshotBounds = {
  from: SnapshotProgress;
  /** Replaying a former attempt: exactly up to here (null: to the end of the last table). */
  to: SnapshotProgress | null;
  /** Rows this run may copy (ignored when replaying). */
  budget: number;
  /** Stop between batches once this is true (ignored when replaying). */
  timeUp(): boolean;
};

/**
 * Yields batches of contract rows; `progress()` is where the copy stopped: null when every
 * table was copied to its end.
 */
export function copyTables(
  client: pg.Client,
  tables: CapturedTable[],
  shape: RowShape,
  meta: { position: string; committedAt: string },
  bounds: SnapshotBounds,
) {
  let stoppedAt: SnapshotProgress | null = null;
  async function* batches(): AsyncGenerator<unknown[][]> {
    let copied = 0;
    const replay = bounds.to !== null || bounds.budget === Number.POSITIVE_INFINITY;
    const last = bounds.to ? bounds.to.table : tables.length - 1;
    for (let ti = bounds.from.table; ti <= last; ti++) {
      const t = tables[ti];
      const startKey = ti === bounds.from.table ? bounds.from.key : null;
      const endKey = bounds.to && ti === bounds.to.table ? bounds.to.key : null;
      const keyTypes = t.key.map((k) => t.columns.find((c) => c.name === k)?.type ?? 'text');
      const keyList = t.key.map(q).join(', ');
      const params = (vals: string[], offset: number) =>
        vals.map((_, i) => `$${offset + i + 1}::${keyTypes[i]}`).join(', ');
      const where: string[] = [];
      const values: string[] = [];
      if (startKey && t.key.length > 0) {
        where.push(`(${keyList}) > (${params(startKey, values.length)})`);
        values.push(...startKey);
      }
      if (endKey && t.key.length > 0) {
        where.push(`(${keyList}) <= (${params(endKey, values.length)})`);
        values.push(...endKey);
      }
      const cols = t.columns.map((c) => q(c.name)).join(', ');
      const keyText = t.key.map((k, i) => `${q(k)}::text AS sluice_key_${i}`).join(', ');
      const text = `DECLARE ${CURSOR} NO SCROLL CURSOR FOR SELECT ${cols}${keyText ? `, ${keyText}` : ''}
                      FROM ${t.sql}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
                      ${keyList ? `ORDER BY ${keyList}` : ''}`;
      await client.query({ text, values });
      const index = shape.index.get(t.name)!;
      const targets = t.columns.map((c) => index.get(c.name)!);
      const width = t.columns.length;
      let lastKey: string[] | null = startKey;
      try {
        for (;;) {
          // A table without a key cannot be resumed in the middle: it is copied whole.
          const room = replay || t.key.length === 0 ? BATCH : Math.min(BATCH, bounds.budget - copied);
          if (room <= 0) {
            stoppedAt = { table: ti, key: lastKey };
            return;
          }
          const r = await client.query<unknown[]>({
            text: `FETCH FORWARD ${room} FROM ${CURSOR}`,
            rowMode: 'array',
          });
          if (r.rows.length === 0) break;
          const out: unknown[][] = new Array(r.rows.length);
          for (let n = 0; n < r.rows.length; n++) {
            const src = r.rows[n];
            const row: unknown[] = new Array(shape.columns.length).fill(null);
            row[0] = 'insert';
            row[1] = t.name;
            row[2] = meta.position;
            row[3] = meta.committedAt;
            for (let j = 0; j < width; j++) row[targets[j]] = src[j];
            out[n] = row;
          }
          if (t.key.length > 0) lastKey = r.rows[r.rows.length - 1].slice(width).map(String);
          copied += r.rows.length;
          yield out;
          if (r.rows.length < room) break;
          if (!replay && t.key.length > 0 && bounds.timeUp()) {
            stoppedAt = { table: ti, key: lastKey };
            return;
          }
        }
      } finally {
        await client.query(`CLOSE ${CURSOR}`).catch(() => {});
      }
    }
    stoppedAt = null;
  }
  return { batches: batches(), progress: () => stoppedAt };
}
