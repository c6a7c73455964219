import type { ConnectorContext } from '../../types';
import { closeMysql, connectMysql, type MysqlConnection, mysqlError } from '../connect';
import { parseCheckpoint, positionText } from './position';
import { binaryLogs, binlogRetentionSeconds, bytesBehind } from './server';

// How far a capture is behind (docs/connectors/mysql.md "Positions and retention"): the bytes of binlog from its
// committed position to the server's end, from SHOW BINARY LOGS. MySQL/MariaDB keep no slot
// for a capture, so nothing is retained for it: the binlogs go by the server's retention
// (binlog_expire_logs_seconds / expire_logs_days) whether the capture read them or not.

export type MysqlLag = {
  /** Binlog bytes between the committed position and the end; null when that binlog is gone. */
  lag_bytes: number | null;
  /** The oldest binlog the server keeps: a position before it can no longer be read. */
  oldest_binlog: string | null;
  /** The server's binlog retention in seconds; null when binlogs are not purged by age. */
  retention_seconds: number | null;
  /** The committed position is in the binlog being written now (it cannot be purged yet). */
  in_current_binlog: boolean;
};

/** The lag of a committed checkpoint text (a step's cursor) or null (nothing committed yet). */
export async function mysqlLag(
  conn: MysqlConnection,
  checkpoint: string | null,
  ctx: ConnectorContext,
): Promise<MysqlLag> {
  const connection = await connectMysql(conn, ctx, { readOnly: true });
  try {
    const files = await binaryLogs(connection);
    const retention = await binlogRetentionSeconds(connection);
    const oldest = files[0]?.name ?? null;
    const base = { oldest_binlog: oldest, retention_seconds: retention };
    if (checkpoint === null) return { ...base, lag_bytes: null, in_current_binlog: false };
    const c = parseCheckpoint(checkpoint);
    const at = c.phase === 'stream' ? c.at : c.from;
    return { ...base, lag_bytes: bytesBehind(at, files), in_current_binlog: files.at(-1)?.name === at.file };
  } catch (err) {
    throw mysqlError(err, conn);
  } finally {
    await closeMysql(connection);
  }
}

/**
 * The capability's positionLag: the lag of a committed checkpoint, its position as
 * `file:offset`, and what the server's retention means for it (docs/cdc.md "Alerts").
 */
export async function mysqlPositionLag(conn: MysqlConnection, checkpoint: string, ctx: ConnectorContext) {
  const c = parseCheckpoint(checkpoint);
  const lag = await mysqlLag(conn, checkpoint, ctx);
  return {
    lag_bytes: lag.lag_bytes,
    confirmed_position: positionText(c.phase === 'stream' ? c.at : c.from),
    retention: { seconds: lag.retention_seconds, in_current_log: lag.in_current_binlog },
  };
}
