import type { CdcOperation } from '@sluice/engine';
import type { CaptureFinding, ConnectorContext } from '../../types';
import { closePg, connectPg, type PgConnection, pgError } from '../connect';
import { type CapturedTable, describeTables, tableParts } from './catalog';

// Validation of a cdc source step on PostgreSQL (docs/cdc.md "Requirements"): the server
// decodes its log (wal_level=logical, a free replication slot), the role may use replication,
// and every table exists, is readable and names its rows on update and delete (a primary key
// or a replica identity). Each problem is a finding naming the table and the fix.

export const SERVER = '(server)';

export function tableFindings(t: CapturedTable): CaptureFinding[] {
  if (t.oid === null) {
    return [{ table: t.name, code: 'CDC_TABLE_NOT_FOUND', message: `table ${t.name} does not exist` }];
  }
  const noKey = t.identity === 'n' || (t.identity !== 'f' && t.key.length === 0);
  if (noKey) {
    return [
      {
        table: t.name,
        code: 'CDC_TABLE_NO_KEY',
        message: `table ${t.name} has no primary key or replica identity, so its updates and deletes do not say which row they change: add a primary key, or run ALTER TABLE ${t.sql} REPLICA IDENTITY FULL`,
      },
    ];
  }
  return [];
}

export async function checkPgChanges(
  conn: PgConnection,
  op: CdcOperation,
  ctx: ConnectorContext,
): Promise<CaptureFinding[]> {
  try {
    const findings: CaptureFinding[] = [];
    const client = await connectPg(conn, ctx);
    try {
      const s = await client.query<{ wal: string; slots: string; role: boolean }>(
        `SELECT current_setting('wal_level') AS wal, current_setting('max_replication_slots') AS slots,
                (SELECT rolreplication OR rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)
                OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = 'rds_replication'
                            AND pg_has_role(current_user, r.oid, 'member')) AS role`,
      );
      const server = s.rows[0];
      if (server.wal !== 'logical') {
        findings.push({
          table: SERVER,
          code: 'CDC_SERVER_SETTING',
          message: `the server's wal_level is ${server.wal}: set wal_level = logical in postgresql.conf and restart the server`,
        });
      }
      if (Number(server.slots) === 0) {
        findings.push({
          table: SERVER,
          code: 'CDC_SERVER_SETTING',
          message:
            'max_replication_slots is 0: set it to at least one per captured pipeline step and restart the server',
        });
      }
      if (!server.role) {
        findings.push({
          table: SERVER,
          code: 'CDC_PERMISSION',
          message: `role ${conn.config.user} cannot use replication: ALTER ROLE ${conn.config.user} REPLICATION (on managed services, grant their replication role)`,
        });
      }
      const valid: string[] = [];
      for (const name of op.tables) {
        try {
          tableParts(name);
          valid.push(name);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          findings.push({ table: name, code: 'CDC_TABLE_NOT_FOUND', message });
        }
      }
      const tables = await describeTables(client, valid);
      for (const t of tables) {
        const own = tableFindings(t);
        findings.push(...own);
        if (own.length > 0 || t.oid === null) continue;
        const r = await client.query<{ ok: boolean }>(`SELECT has_table_privilege($1::oid, 'SELECT') AS ok`, [
          t.oid,
        ]);
        if (!r.rows[0].ok) {
          findings.push({
            table: t.name,
            code: 'CDC_TABLE_NOT_READABLE',
            message: `role ${conn.config.user} cannot read table ${t.name}: GRANT SELECT ON ${t.sql} TO ${conn.config.user}`,
          });
        }
      }
    } finally {
      await closePg(client);
    }
    return findings;
  } catch (err) {
    throw pgError(err, conn);
  }
}
