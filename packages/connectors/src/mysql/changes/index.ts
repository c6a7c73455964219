import type { ChangesCapability } from '../../types';
import type { MysqlConnection } from '../connect';

// The `changes` capability of the mysql connector (docs/connectors/mysql.md "Change data
// capture"). The modules load on first use, with the binlog library.
//
// `captures` lists nothing: a MySQL/MariaDB capture is only a position in the binlog, kept as
// the step's checkpoint, with nothing on the server to list or drop (`positionLag` tells how
// far a committed checkpoint is behind). `release` has nothing to drop for the same reason: binlog
// retention is the server's (binlog_expire_logs_seconds / expire_logs_days), and a position
// older than the oldest binlog kept fails the read, naming those settings.

export const mysqlChanges: ChangesCapability<MysqlConnection['config'], MysqlConnection['credentials']> = {
  check: async (conn, op, ctx) => (await import('./check')).checkMysqlChanges(conn, op, ctx),
  read: async (conn, step, capture, ctx) =>
    (await import('./read')).readMysqlChanges(conn, step, capture, ctx),
  captures: async () => [],
  release: async () => {},
  positionLag: async (conn, checkpoint, ctx) =>
    (await import('./lag')).mysqlPositionLag(conn, checkpoint, ctx),
};

export async function mysqlLag(...args: Parameters<typeof import('./lag').mysqlLag>) {
  return (await import('./lag')).mysqlLag(...args);
}
