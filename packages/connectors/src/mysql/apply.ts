import type { SinkResult, StepContext } from '@sluice/engine';
import { compactChanges, inKeyOrder } from '../relational/changes';
import { utcDatetime } from '../relational/datetime';
import { quoteIdent } from '../relational/identifiers';
import type { SinkPlan } from '../relational/pipeline';
import type { MysqlSession } from './session';
import { bindable, sizeOf } from './values';

// The apply mode on MySQL/MariaDB (docs/pipeline-spec.md, "how sinks write"), inside the
// sink's transaction: the compacted changes (relational/changes.ts) go as multi-row
// prepared statements — DELETE … WHERE key IN (…) for the deleted keys first, then
// INSERT … ON DUPLICATE KEY UPDATE for the rest, one statement shape per set of columns the
// changes did not carry (left out of the statement: the target keeps them); only rows lacking a
// NOT NULL column without a default go row by row (below).

const q = (name: string) => quoteIdent(name, 'mysql');
const ROWS_PER_STATEMENT = 1000;
const MAX_PARAMS = 65_535;

export type MysqlApplyOptions = {
  /** Per written column: a DATETIME/TIMESTAMP target (zoned text is stored as its UTC instant). */
  temporal: boolean[];
  /** Bound values per statement stay under this many bytes. */
  byteBudget: number;
};

/**
 * The target's columns (lower-cased) that an INSERT may leave out: nullable or with a default.
 * Looked up only when some rows lack columns (`needed`).
 */
async function columnsWithDefaults(s: MysqlSession, plan: SinkPlan, needed: boolean): Promise<Set<string>> {
  if (!needed) return new Set();
  const rows = await s.execute<{ name: string }[]>(
    `SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?
        AND (IS_NULLABLE = 'YES' OR COLUMN_DEFAULT IS NOT NULL)`,
    [plan.table.schema, plan.table.name],
  );
  return new Set(rows.map((r) => String(r.name).toLowerCase()));
}

export async function applyMysql(
  s: MysqlSession,
  plan: SinkPlan,
  names: string[],
  step: StepContext,
  opts: MysqlApplyOptions,
): Promise<SinkResult> {
  const key = plan.write.key ?? [];
  const set = await compactChanges(plan.rows, key, names);
  const table = plan.table.sql;
  const bind = (row: unknown[], i: number) => {
    const v = row[i];
    return opts.temporal[i] && typeof v === 'string' ? utcDatetime(v) : bindable(v);
  };
  let bytes = 0;

  /** Runs `sqlFor(n)` over the rows, n rows a statement, their values from `valuesOf`. */
  const inChunks = async (
    rows: unknown[][],
    width: number,
    valuesOf: (row: unknown[]) => unknown[],
    sqlFor: (n: number) => string,
  ) => {
    const per = Math.max(1, Math.min(ROWS_PER_STATEMENT, Math.floor(MAX_PARAMS / Math.max(1, width))));
    let pending: unknown[] = [];
    let count = 0;
    let size = 0;
    const flush = async () => {
      if (count === 0) return;
      const sql = sqlFor(count);
      await s.execute(sql, pending);
      // Odd-sized statements are not reused: keep the session's statement cache small.
      if (count !== per) s.connection.unprepare(sql);
      bytes += size;
      pending = [];
      count = 0;
      size = 0;
    };
    for (const row of rows) {
      for (const v of valuesOf(row)) {
        pending.push(v);
        size += sizeOf(v);
      }
      count++;
      if (count >= per || size >= opts.byteBudget) await flush();
    }
    await flush();
  };

  // A truncate empties the table first, in this transaction (DELETE: MySQL's TRUNCATE would
  // commit it, and a retried batch is skipped by the ledger like any other write).
  if (set.truncate) await s.execute(`DELETE FROM ${table}`, []);
  // Deletes first: a key deleted and another inserted with the same unique value elsewhere.
  const keyAt = key.map((k) => names.indexOf(k));
  inKeyOrder(set.deletes, keyAt);
  const keyTuple = key.length === 1 ? '?' : `(${key.map(() => '?').join(', ')})`;
  const keyCols = key.length === 1 ? q(key[0]) : `(${key.map(q).join(', ')})`;
  await inChunks(
    set.deletes,
    key.length,
    (row) => keyAt.map((i) => bind(row, i)),
    (n) =>
      `DELETE FROM ${table} WHERE ${keyCols} IN (${Array.from({ length: n }, () => keyTuple).join(', ')})`,
  );

  // Upserts, grouped by the columns they keep (null: none, the common case).
  const groups = new Map<string, { keep: Set<string>; rows: unknown[][] }>();
  set.upserts.forEach((row, i) => {
    const keep = set.unchanged[i];
    const id = keep ? keep.join('\u0000') : '';
    let g = groups.get(id);
    if (!g) {
      g = { keep: new Set(keep ?? []), rows: [] };
      groups.set(id, g);
    }
    g.rows.push(row);
  });
  // In key order, as InnoDB's clustered index is: far fewer pages touched.
  for (const g of groups.values()) inKeyOrder(g.rows, keyAt);
  const keySet = new Set(key);
  const defaulted = await columnsWithDefaults(s, plan, groups.size > 1 || !groups.has(''));
  for (const g of groups.values()) {
    const update = names.filter((n) => !keySet.has(n) && !g.keep.has(n));
    const written = names.filter((n) => !g.keep.has(n));
    if ([...g.keep].every((n) => defaulted.has(n.toLowerCase()))) {
      // Full rows, and rows whose kept columns all have a default (or take NULL): the kept
      // columns are left out of the statement, so a row the target has keeps their values and
      // a new one gets the defaults.
      // VALUES() works on MariaDB and MySQL 8 (which also knows row aliases, MariaDB does not).
      const at = written.map((n) => names.indexOf(n));
      const assignments =
        update.length > 0 ? update.map((n) => `${q(n)} = VALUES(${q(n)})`) : [`${q(key[0])} = ${q(key[0])}`];
      const tuple = `(${written.map(() => '?').join(', ')})`;
      await inChunks(
        g.rows,
        written.length,
        (row) => at.map((i) => bind(row, i)),
        (n) =>
          `INSERT INTO ${table} (${written.map(q).join(', ')}) VALUES ${Array.from({ length: n }, () => tuple).join(', ')} ON DUPLICATE KEY UPDATE ${assignments.join(', ')}`,
      );
      continue;
    }
    // Rows lacking a NOT NULL column without a default: an INSERT without it fails even for a
    // row that exists (MariaDB checks when it prepares), so each row is looked up (locked) first,
    // then an UPDATE of the carried columns or, when the target lacks the key, an INSERT
    // without the kept ones (their defaults). Row by row: every key is compared as a constant
    // of the key's type (exact for 64-bit unsigned keys).
    const where = key.map((k) => `${q(k)} = ?`).join(' AND ');
    const carried = names.filter((n) => !g.keep.has(n));
    const carriedAt = carried.map((n) => names.indexOf(n));
    const updateAt = update.map((n) => names.indexOf(n));
    const findSql = `SELECT 1 AS found FROM ${table} WHERE ${where} LIMIT 1 FOR UPDATE`;
    const updateSql = `UPDATE ${table} SET ${update.map((c) => `${q(c)} = ?`).join(', ')} WHERE ${where}`;
    const insertSql = `INSERT INTO ${table} (${carried.map(q).join(', ')}) VALUES (${carried.map(() => '?').join(', ')})`;
    for (const row of g.rows) {
      const keys = keyAt.map((i) => bind(row, i));
      const found = await s.execute<unknown[]>(findSql, keys);
      const values =
        found.length > 0 ? updateAt.map((i) => bind(row, i)) : carriedAt.map((i) => bind(row, i));
      if (found.length === 0) await s.execute(insertSql, values);
      else if (update.length > 0) await s.execute(updateSql, [...values, ...keys]);
      bytes += values.reduce((n: number, v) => n + sizeOf(v), 0);
    }
    s.connection.unprepare(findSql);
    s.connection.unprepare(updateSql);
    s.connection.unprepare(insertSql);
  }
  step.log(
    'info',
    `apply: ${set.changes} changes compacted to ${set.truncate ? 'a truncate, ' : ''}${set.upserts.length} upserts and ${set.deletes.length} deletes`,
  );
  return { rows: set.changes, bytes };
}
