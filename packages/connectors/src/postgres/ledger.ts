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

const ledgerOf = (table: TableName) =>
  table.schema === null
    ? quoteIdent(LEDGER_TABLE, 'postgres')
    : `${quoteIdent(table.schema, 'postgres')}.${quoteIdent(LEDGER_TABLE, 'postgres')}`;

/**
 * Inside the sink's open transaction: what an earlier attempt committed under `key`, or null.
 * Creates the ledger when it is missing (only then: a role without CREATE on the schema works
 * once the table exists).
 */
export async function committedWrite(
  s: PgSession,
  table: TableName,
  key: string,
): Promise<SinkResult | null> {
  const ledger = ledgerOf(table);
  const found = await s.timed(
    s.client.query<{ r: string | null }>('SELECT to_regclass($1)::text AS r', [ledger]),
  );
  if (found.rows[0].r === null) {
    // Concurrent CREATE TABLE IF NOT EXISTS can still collide in the catalog (23505 on
    // pg_type): sinks of parallel runs take turns, until the first creator's transaction ends.
    await s.timed(s.client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sluice-ledger:${ledger}`]));
    await s.timed(
      s.client.query(
        `CREATE TABLE IF NOT EXISTS ${ledger} (commit_key text PRIMARY KEY, rows bigint NOT NULL,
           bytes bigint NOT NULL, committed_at timestamptz NOT NULL DEFAULT now())`,
      ),
    );
    return null;
  }
  const r = await s.timed(
    s.client.query<{ rows: string; bytes: string }>(
      `SELECT rows, bytes FROM ${ledger} WHERE commit_key = $1`,
      [key],
    ),
  );
  return r.rows[0] ? { rows: Number(r.rows[0].rows), bytes: Number(r.rows[0].bytes) } : null;
}

/**
 * Records the write just before COMMIT. The primary key makes a second commit of the same key
 * fail and roll back, should two attempts ever race.
 */
export async function recordWrite(s: PgSession, table: TableName, key: string, result: SinkResult) {
  await s.timed(
    s.client.query(`INSERT INTO ${ledgerOf(table)} (commit_key, rows, bytes) VALUES ($1, $2, $3)`, [
      key,
      result.rows,
      result.bytes,
    ]),
  );
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
