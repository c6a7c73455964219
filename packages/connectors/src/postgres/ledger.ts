import type { SinkResult, Step } from '@sluice/engine';
import { quoteIdent, type TableName } from '../relational/identifiers';
import { sinkTableOf } from '../relational/pipeline';
import type { ConnectorContext } from '../types';
import type { PgConnection } from './connect';
import { openPgSession, type PgSession } from './session';

// The sink's commit ledger: one row per committed write, inserted in the same transaction as
// the rows it describes, in the target table's schema. A retried run (its worker died after the
// commit but before the run ended) finds its write here and writes nothing a second time; its
// counts come back from the row. Only the run's commit key is stored, never data or secrets.

export const LEDGER_TABLE = 'sluice_sink_commits';

export const ledgerOf = (table: TableName) =>
  table.schema === null
    ? quoteIdent(LEDGER_TABLE, 'postgres')
    : `${quoteIdent(table.schema, 'postgres')}.${quoteIdent(LEDGER_TABLE, 'postgres')}`;

/** Creates the missing ledger, inside the sink's transaction. */
export async function createLedger(s: PgSession, ledger: string): Promise<void> {
  // Concurrent CREATE TABLE IF NOT EXISTS can still collide in the catalog (23505 on
  // pg_type): sinks of parallel runs take turns, until the first creator's transaction ends.
  await s.timed(s.client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sluice-ledger:${ledger}`]));
  await s.timed(
    s.client.query(
      `CREATE TABLE IF NOT EXISTS ${ledger} (commit_key text PRIMARY KEY, rows bigint NOT NULL,
         bytes bigint NOT NULL, committed_at timestamptz NOT NULL DEFAULT now())`,
    ),
  );
}

/** The ledger's row of `key` (the ledger exists), as a result; null when there is none. */
export async function lookUpWrite(s: PgSession, ledger: string, key: string): Promise<SinkResult | null> {
  const r = await s.timed(
    s.client.query<{ rows: string; bytes: string }>(
      `SELECT rows, bytes FROM ${ledger} WHERE commit_key = $1`,
      [key],
    ),
  );
  return writeOf(r.rows);
}

export const writeOf = (rows: { rows: string; bytes: string }[]): SinkResult | null =>
  rows[0] ? { rows: Number(rows[0].rows), bytes: Number(rows[0].bytes) } : null;

/**
 * Ends the sink's transaction in one round trip: the statement limit set back to `limit` (when
 * the COPY left it lifted), the write recorded under `key`, COMMIT. The ledger's primary key
 * makes a second commit of the same key fail and roll back, should two attempts ever race. One
 * simple-protocol message of our own statements (values written in as literals); should one
 * fail, the server skips the rest and the transaction stays open for the caller's ROLLBACK.
 */
export async function recordAndCommit(
  s: PgSession,
  table: TableName,
  key: string | undefined,
  result: SinkResult,
  limit?: string,
): Promise<void> {
  const lit = (v: string) => s.client.escapeLiteral(v);
  const count = (n: number) => {
    if (!Number.isSafeInteger(n)) throw new Error(`not a count: ${n}`);
    return String(n);
  };
  const parts: string[] = [];
  if (limit !== undefined) parts.push(`SELECT set_config('statement_timeout', ${lit(limit)}, true)`);
  if (key !== undefined) {
    parts.push(
      `INSERT INTO ${ledgerOf(table)} (commit_key, rows, bytes) VALUES (${lit(key)}, ${count(result.rows)}, ${count(result.bytes)})`,
    );
  }
  parts.push('COMMIT');
  await s.timed(s.client.query(parts.join('; ')));
}

/**
 * Outside any run transaction: the rows and bytes committed under keys starting with `prefix`
 * (a run's sink step, every write of it), or null when none are. A run that starts again after
 * its worker died reports what the dead attempt committed, even if it dies in turn.
 */
export async function committedUnder(
  s: PgSession,
  table: TableName,
  prefix: string,
): Promise<SinkResult | null> {
  const ledger = ledgerOf(table);
  const found = await s.timed(
    s.client.query<{ r: string | null }>('SELECT to_regclass($1)::text AS r', [ledger]),
  );
  if (found.rows[0].r === null) return null;
  const r = await s.timed(
    s.client.query<{ n: string; rows: string | null; bytes: string | null }>(
      `SELECT count(*) AS n, sum(rows) AS rows, sum(bytes) AS bytes FROM ${ledger}
        WHERE left(commit_key, length($1)) = $1`,
      [prefix],
    ),
  );
  const row = r.rows[0];
  return Number(row.n) > 0 ? { rows: Number(row.rows), bytes: Number(row.bytes) } : null;
}

/** The connector's `committedWrites`: one short read-only session. */
export async function committedWrites(
  conn: PgConnection,
  step: Step,
  keyPrefix: string,
  ctx: ConnectorContext,
): Promise<SinkResult | null> {
  const table = sinkTableOf(step, 'postgres');
  if (!table) return null;
  const s = await openPgSession(conn, ctx, ctx.signal ?? new AbortController().signal, { readOnly: true });
  try {
    return await committedUnder(s, table, keyPrefix);
  } catch (err) {
    throw s.error(err);
  } finally {
    await s.close();
  }
}
