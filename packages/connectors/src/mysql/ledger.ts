import type { SinkResult, Step } from '@sluice/engine';
import { quoteIdent, type TableName } from '../relational/identifiers';
import { sinkTableOf } from '../relational/pipeline';
import type { ConnectorContext } from '../types';
import type { MysqlConnection } from './connect';
import { type MysqlSession, openMysqlSession } from './session';

// The sink's commit ledger (see postgres/ledger.ts), in the target table's database. MySQL
// commits DDL implicitly, so the ledger is created before the sink's transaction begins; the
// lookup and the record are made inside it.

export const LEDGER_TABLE = 'sluice_sink_commits';

const ledgerOf = (table: TableName) =>
  table.schema === null
    ? quoteIdent(LEDGER_TABLE, 'mysql')
    : `${quoteIdent(table.schema, 'mysql')}.${quoteIdent(LEDGER_TABLE, 'mysql')}`;

/** Before START TRANSACTION: the ledger exists afterwards (created only when missing). */
export async function ensureLedger(s: MysqlSession, table: TableName) {
  const rows = await s.execute<{ n: number }[]>(
    'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
    [table.schema, LEDGER_TABLE],
  );
  if (Number(rows[0].n) > 0) return;
  await s.execute(
    `CREATE TABLE IF NOT EXISTS ${ledgerOf(table)} (commit_key VARCHAR(191) NOT NULL PRIMARY KEY,
       \`rows\` BIGINT NOT NULL, bytes BIGINT NOT NULL,
       committed_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)) ENGINE=InnoDB`,
    [],
  );
}

/** Inside the transaction: what an earlier attempt committed under `key`, or null. */
export async function committedWrite(
  s: MysqlSession,
  table: TableName,
  key: string,
): Promise<SinkResult | null> {
  const rows = await s.execute<{ rows: number | string; bytes: number | string }[]>(
    `SELECT \`rows\`, bytes FROM ${ledgerOf(table)} WHERE commit_key = ? FOR UPDATE`,
    [key],
  );
  return rows[0] ? { rows: Number(rows[0].rows), bytes: Number(rows[0].bytes) } : null;
}

/** Just before COMMIT; the primary key refuses a second commit of the same write. */
export async function recordWrite(s: MysqlSession, table: TableName, key: string, result: SinkResult) {
  await s.execute(`INSERT INTO ${ledgerOf(table)} (commit_key, \`rows\`, bytes) VALUES (?, ?, ?)`, [
    key,
    result.rows,
    result.bytes,
  ]);
}

/** Outside the run's transaction: what was committed under keys starting with `prefix`, or null. */
export async function committedUnder(
  s: MysqlSession,
  table: TableName,
  prefix: string,
): Promise<SinkResult | null> {
  const exists = await s.execute<{ n: number }[]>(
    'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
    [table.schema, LEDGER_TABLE],
  );
  if (Number(exists[0].n) === 0) return null;
  const rows = await s.execute<{ n: number; rows: string | null; bytes: string | null }[]>(
    `SELECT COUNT(*) AS n, SUM(\`rows\`) AS \`rows\`, SUM(bytes) AS bytes FROM ${ledgerOf(table)}
      WHERE LEFT(commit_key, CHAR_LENGTH(?)) = ?`,
    [prefix, prefix],
  );
  return Number(rows[0].n) > 0 ? { rows: Number(rows[0].rows), bytes: Number(rows[0].bytes) } : null;
}

/** The connector's `committedWrites`: one short read-only session. */
export async function committedWrites(
  conn: MysqlConnection,
  step: Step,
  keyPrefix: string,
  ctx: ConnectorContext,
): Promise<SinkResult | null> {
  const table = sinkTableOf(step, 'mysql');
  if (!table) return null;
  const s = await openMysqlSession(conn, ctx, ctx.signal ?? new AbortController().signal, { readOnly: true });
  try {
    return await committedUnder(s, table, keyPrefix);
  } catch (err) {
    throw s.error(err);
  } finally {
    await s.close();
  }
}
