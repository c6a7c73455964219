import type { ConnectorContext } from '../../types';
import { closeMysql, connectMysql, type MysqlConnection, mysqlError } from '../connect';
import { parseCheckpoint, positionText } from './position';
import { binaryLogs, bytesBehind } from './server';

// How far a capture is behind (docs/connectors/mysql.md "Positions and retention"): the bytes of binlog from its
// committed position to the server's end, from SHOW BINARY LOGS. MySQL/MariaDB keep no slot
// for a capture, so nothing is retained for it: the binlogs go by the server's retention
// (binlog_expire_logs_seconds / expire_logs_days) whether the capture read them or not.

export type MysqlLag = {
  /** Binlog bytes between the committed position and the end; null when that binlog is gone. */
  lag_bytes: number | null;
  /** The oldest binlog the server keeps: a position before it can no longer be read. */
  oldest_binlog: string | null;
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
    const oldest = files[0]?.name ?? null;
    if (checkpoint === null) return { lag_bytes: null, oldest_binlog: oldest };
    const c = parseCheckpoint(checkpoint);
    return { lag_bytes: bytesBehind(c.phase === 'stream' ? c.at : c.from, files), oldest_binlog: oldest };
  } catch (err) {
    throw mysqlError(err, conn);
  } finally {
    await closeMysql(connection);
  }
}

/** The capability's positionLag: the lag of a committed checkpoint and its position as `file:offset`. */
export async function mysqlPositionLag(conn: MysqlConnection, checkpoint: string, ctx: ConnectorContext) {
  const c = parseCheckpoint(checkpoint);
  const { lag_bytes } = await mysqlLag(conn, checkpoint, ctx);
  return { lag_bytes, confirmed_position: positionText(c.phase === 'stream' ? c.at : c.from) };
}
