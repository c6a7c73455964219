import { randomBytes } from 'node:crypto';
import type { SinkResult, StepContext } from '@sluice/engine';
import { type ChangeSet, compactChanges } from '../relational/changes';
import { quoteIdent } from '../relational/identifiers';
import type { SinkPlan } from '../relational/pipeline';
import { copyIn } from './copy-in';
import type { TargetColumn } from './csv-in';
import type { PgSession } from './session';

// The apply mode on PostgreSQL (docs/pipeline-spec.md, "how sinks write"), inside the sink's
// transaction: the compacted changes (relational/changes.ts) go in one COPY into a temporary
// staging table with the target's column types plus a delete flag and the columns to keep,
// then one DELETE … USING for the deleted keys, one INSERT … ON CONFLICT DO UPDATE for full
// rows and, only when some rows lack columns (unchanged TOAST values), one UPDATE … FROM that
// keeps the target's value of those columns.

const q = (name: string) => quoteIdent(name, 'postgres');
const DELETE_FLAG = '_sluice_delete';
const KEEP = '_sluice_unchanged';
const SLICE = 1000;
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

async function* stagedRows(set: ChangeSet): AsyncGenerator<unknown[][]> {
  const out: unknown[][] = [];
  for (const row of set.deletes) {
    out.push([...row, true, null]);
    if (out.length >= SLICE) yield out.splice(0);
  }
  for (let i = 0; i < set.upserts.length; i++) {
    out.push([...set.upserts[i], false, set.unchanged[i]]);
    if (out.length >= SLICE) yield out.splice(0);
  }
  if (out.length > 0) yield out;
}

/** The target's key columns equal the staging row's. */
const keyMatch = (key: string[]) => key.map((k) => `t.${q(k)} = s.${q(k)}`).join(' AND ');

export async function applyPg(
  s: PgSession,
  plan: SinkPlan,
  names: string[],
  byName: Map<string, TargetColumn>,
  step: StepContext,
  idleTimeoutMs: number,
  csvChunks: (batches: AsyncIterable<unknown[][]>, arrays: boolean[]) => AsyncIterable<Uint8Array>,
): Promise<SinkResult> {
  const key = plan.write.key ?? [];
  const set = await compactChanges(plan.rows, key, names);
  const target = plan.table.sql;
  const stage = q(`sluice_apply_${randomBytes(6).toString('hex')}`);
  const cols = names.map(q).join(', ');
  const staged = set.deletes.length + set.upserts.length;
  let bytes = 0;
  if (staged > 0) {
    await s.timed(
      s.client.query(
        `CREATE TEMPORARY TABLE ${stage} ON COMMIT DROP AS SELECT ${cols} FROM ${target} WITH NO DATA`,
      ),
    );
    await s.timed(
      s.client.query(
        `ALTER TABLE ${stage} ADD COLUMN ${q(DELETE_FLAG)} boolean, ADD COLUMN ${q(KEEP)} text[]`,
      ),
    );
    const arrays = [...names.map((n) => byName.get(n)!.array), false, true];
    const done = await copyIn(s.client, {
      table: stage,
      columns: [...names, DELETE_FLAG, KEEP],
      format: { kind: 'csv' },
      chunks: csvChunks(stagedRows(set), arrays),
      idleTimeoutMs,
    });
    bytes = done.bytes;
    // Statistics for the joins with the target (DELETE … USING, UPDATE … FROM); the INSERT of
    // full rows reads the staging table whole and needs none.
    const joins = set.deletes.length > 0 || set.unchanged.some((u) => u !== null);
    if (staged > 10_000 && joins) await s.timed(s.client.query(`ANALYZE ${stage}`));
  }
  // A truncate empties the table first, in this transaction (DELETE: no TRUNCATE privilege or
  // exclusive lock needed, and a retried batch is skipped by the ledger like any other write).
  if (set.truncate) await s.timed(s.client.query(`DELETE FROM ${target}`));
  // Deletes first: a key deleted and another inserted with the same unique value elsewhere.
  if (set.deletes.length > 0) {
    await s.timed(
      s.client.query(
        `DELETE FROM ${target} t USING ${stage} s WHERE s.${q(DELETE_FLAG)} AND ${keyMatch(key)}`,
      ),
    );
  }
  const rest = names.filter((n) => !key.includes(n));
  const partial = set.unchanged.filter((u) => u !== null).length;
  if (set.upserts.length > partial) {
    // In key order, as the index is: far fewer pages touched than in the batch's order.
    const update =
      rest.length > 0
        ? `DO UPDATE SET ${rest.map((n) => `${q(n)} = EXCLUDED.${q(n)}`).join(', ')}`
        : 'DO NOTHING';
    await s.timed(
      s.client.query(
        `INSERT INTO ${target} (${cols}) SELECT ${cols} FROM ${stage}
          WHERE NOT ${q(DELETE_FLAG)} AND ${q(KEEP)} IS NULL ORDER BY ${key.map(q).join(', ')}
          ON CONFLICT (${key.map(q).join(', ')}) ${update}`,
      ),
    );
  }
  if (partial > 0) {
    // Rows the target has: every carried column, the kept ones untouched.
    const sets = rest.map(
      (n) => `${q(n)} = CASE WHEN ${literal(n)} = ANY(s.${q(KEEP)}) THEN t.${q(n)} ELSE s.${q(n)} END`,
    );
    if (sets.length > 0) {
      await s.timed(
        s.client.query(
          `UPDATE ${target} t SET ${sets.join(', ')} FROM ${stage} s WHERE s.${q(KEEP)} IS NOT NULL AND ${keyMatch(key)}`,
        ),
      );
    }
    // Rows it lacks have no value to keep: inserted without those columns (their defaults),
    // one statement per set of kept columns.
    let added = 0;
    const kept = new Map(set.unchanged.filter((u) => u !== null).map((u) => [u.join(','), u]));
    for (const keep of kept.values()) {
      const carried = names.filter((n) => !keep.includes(n)).map(q);
      const r = await s.timed(
        s.client.query(
          `INSERT INTO ${target} (${carried.join(', ')}) SELECT ${carried.map((c) => `s.${c}`).join(', ')}
             FROM ${stage} s WHERE s.${q(KEEP)} = $1::text[]
              AND NOT EXISTS (SELECT 1 FROM ${target} t WHERE ${keyMatch(key)})
           ON CONFLICT (${key.map(q).join(', ')}) DO NOTHING`,
          [keep],
        ),
      );
      added += r.rowCount ?? 0;
    }
    if (added > 0)
      step.log(
        'warn',
        `${added} updates without some column values (unchanged in the source) found no row in ${plan.table.display}: inserted with those columns at their defaults`,
      );
  }
  step.log(
    'info',
    `apply: ${set.changes} changes compacted to ${set.truncate ? 'a truncate, ' : ''}${set.upserts.length} upserts and ${set.deletes.length} deletes`,
  );
  return { rows: set.changes, bytes };
}
