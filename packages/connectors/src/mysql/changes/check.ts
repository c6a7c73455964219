import type { CdcOperation } from '@sluice/engine';
import type { CaptureFinding, ConnectorContext } from '../../types';
import { closeMysql, connectMysql, type MysqlConnection, mysqlError } from '../connect';
import { serverFacts, settingProblems } from './server';
import { describeTables, type TableName, tableName } from './tables';

// Validation of a capture (docs/connectors/mysql.md "Change data capture"): the
// server's binlog settings (findings on table `*`) and each table: it exists and has a primary
// key, without which a delete or update could not name its row. The codes are docs/cdc.md
// "Requirements", the same as PostgreSQL's.

export async function checkMysqlChanges(
  conn: MysqlConnection,
  op: CdcOperation,
  ctx: ConnectorContext,
): Promise<CaptureFinding[]> {
  const connection = await connectMysql(conn, ctx, { readOnly: true });
  try {
    const findings: CaptureFinding[] = settingProblems(await serverFacts(connection)).map((p) => ({
      table: '*',
      ...p,
    }));
    const names: TableName[] = [];
    for (const n of op.tables) {
      const t = tableName(n, conn.config.database);
      if (t) names.push(t);
      else
        findings.push({
          table: n,
          code: 'CDC_TABLE_NOT_FOUND',
          message: `${JSON.stringify(n)} is not database.table`,
        });
    }
    const described = await describeTables(connection, names);
    for (const n of names) {
      const t = described.get(n.name);
      if (!t) {
        findings.push({
          table: n.name,
          code: 'CDC_TABLE_NOT_FOUND',
          message: `table ${n.name} does not exist (or this user lacks SELECT on it)`,
        });
      } else if (t.key.length === 0) {
        findings.push({
          table: n.name,
          code: 'CDC_TABLE_NO_KEY',
          message: `table ${n.name} has no primary key, so its deletes and updates cannot name their row: add one (ALTER TABLE ${n.name} ADD PRIMARY KEY (…))`,
        });
      }
    }
    return findings;
  } catch (err) {
    throw mysqlError(err, conn);
  } finally {
    await closeMysql(connection);
  }
}
