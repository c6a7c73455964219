import type { SinkResult } from '@sluice/engine';
import type pg from 'pg';
import type { TableName } from '../relational/identifiers';
import type { TargetColumn } from './csv-in';
import { createLedger, ledgerOf, lookUpWrite, writeOf } from './ledger';
import type { PgSession } from './session';
import { LIFT_SQL } from './statement-limit';

// The start of a PostgreSQL sink's transaction in one round trip: BEGIN, whether the target and
// the commit ledger exist, the target's columns and, when this session has seen the ledger
// before, the ledger's row of this write. One simple-protocol message of our own statements
// (names and the commit key written in as literals, never a user's SQL). Before, these were five
// statements, each waiting for the one before.

/** Ledgers a session has seen exist: its next write looks its key up in the first message. */
const ledgersSeen = new WeakMap<pg.Client, Set<string>>();

export type WriteStart = {
  /** The target table exists (else `columns` is empty). */
  exists: boolean;
  columns: TargetColumn[];
  /** What an earlier attempt committed under the commit key, or null. */
  earlier: SinkResult | null;
  /**
   * With `lift`, when the message lifted statement_timeout (its last statement, after the reads):
   * the value it had. The transaction then runs without it until the caller sets it back.
   */
  liftedFrom?: string;
};

/** The target's columns in the order of the table, as one JSON array (empty when it is missing). */
const columnsOf = (table: string) => `(SELECT coalesce(json_agg(json_build_object(
    'name', a.attname, 'type', format_type(a.atttypid, a.atttypmod), 'oid', a.atttypid::int,
    'category', t.typcategory) ORDER BY a.attnum), '[]')
   FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
  WHERE a.attrelid = to_regclass(${table}) AND a.attnum > 0 AND NOT a.attisdropped)`;

type Inspected = {
  r: string | null;
  l: string | null;
  columns: { name: string; type: string; oid: number; category: string }[];
};

/**
 * Opens the sink's transaction and reads what the write needs to know first. A missing ledger
 * is created (only then: a role without CREATE on the schema works once it exists); a missing
 * target is the caller's to create, and its columns to read after.
 */
export async function beginWrite(
  s: PgSession,
  table: TableName,
  commitKey: string | undefined,
  opts: { lift?: boolean } = {},
): Promise<WriteStart> {
  const lit = (v: string) => s.client.escapeLiteral(v);
  const ledger = ledgerOf(table);
  const seen = ledgersSeen.get(s.client) ?? new Set<string>();
  ledgersSeen.set(s.client, seen);
  const lookUp = commitKey !== undefined && seen.has(ledger);
  const statements = [
    'BEGIN',
    `SELECT to_regclass(${lit(table.sql)})::text AS r, to_regclass(${lit(ledger)})::text AS l,
            ${columnsOf(lit(table.sql))} AS columns`,
  ];
  if (lookUp) statements.push(`SELECT rows, bytes FROM ${ledger} WHERE commit_key = ${lit(commitKey)}`);
  // A write whose ledger this session saw goes on to its COPY, which runs with statement_timeout
  // lifted: lifted here, last, the COPY needs no round trip of its own for it (copy-in.ts).
  const lift = opts.lift === true && lookUp;
  if (lift) statements.push(LIFT_SQL);
  let results: pg.QueryResult[];
  try {
    results = (await s.timed(s.client.query(statements.join('; ')))) as unknown as pg.QueryResult[];
  } catch (err) {
    // The ledger this session saw is gone (dropped since): start again without looking it up.
    if (!lookUp || (err as { code?: string }).code !== '42P01') throw err;
    seen.delete(ledger);
    await s.timed(s.client.query('ROLLBACK'));
    return beginWrite(s, table, commitKey, opts);
  }
  const inspected = results[1].rows[0] as Inspected;
  const columns = inspected.columns.map((c) => ({
    name: c.name,
    type: c.type,
    oid: c.oid,
    array: c.category === 'A',
    category: c.category,
  }));
  const exists = inspected.r !== null;
  if (commitKey === undefined) return { exists, columns, earlier: null };
  if (inspected.l === null) {
    seen.delete(ledger);
    await createLedger(s, ledger);
    return { exists, columns, earlier: null };
  }
  seen.add(ledger);
  const earlier = lookUp
    ? writeOf(results[2].rows as { rows: string; bytes: string }[])
    : await lookUpWrite(s, ledger, commitKey);
  if (!lift) return { exists, columns, earlier };
  return { exists, columns, earlier, liftedFrom: (results[3].rows[0] as { t: string }).t };
}
