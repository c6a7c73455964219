import type mysql from 'mysql2';
import { ConnectorError } from '../../types';
import { queryMysql } from '../connect';
import { comparePositions, type Position, positionText } from './position';

// What a capture asks the server (docs/connectors/mysql.md "Change data capture"): its
// flavour, its binlog settings, its current position and the binlog files it still keeps.

export type ServerFacts = {
  mariadb: boolean;
  logBin: boolean;
  binlogFormat: string;
  binlogRowImage: string;
};

export async function serverFacts(connection: mysql.Connection): Promise<ServerFacts> {
  const [row] = await queryMysql<any[]>(
    connection,
    `SELECT VERSION() AS version, @@GLOBAL.log_bin AS log_bin, @@GLOBAL.binlog_format AS binlog_format,
            @@GLOBAL.binlog_row_image AS binlog_row_image`,
  );
  return {
    mariadb: /mariadb/i.test(String(row.version)),
    logBin: String(row.log_bin) === '1' || String(row.log_bin).toUpperCase() === 'ON',
    binlogFormat: String(row.binlog_format).toUpperCase(),
    binlogRowImage: String(row.binlog_row_image).toUpperCase(),
  };
}

/** The server settings a capture needs, as messages naming the setting (empty when fine); codes of docs/cdc.md "Requirements". */
export function settingProblems(f: ServerFacts): { code: string; message: string }[] {
  if (!f.logBin) {
    return [
      {
        code: 'CDC_SERVER_SETTING',
        message: 'the binary log is off: start the server with log_bin (and server_id) to capture changes',
      },
    ];
  }
  const out: { code: string; message: string }[] = [];
  if (f.binlogFormat !== 'ROW') {
    out.push({
      code: 'CDC_SERVER_SETTING',
      message: `binlog_format is ${f.binlogFormat}: set binlog_format=ROW (row-based logging) to capture changes`,
    });
  }
  if (f.binlogRowImage !== 'FULL') {
    out.push({
      code: 'CDC_SERVER_SETTING',
      message: `binlog_row_image is ${f.binlogRowImage}: set binlog_row_image=FULL so updates and deletes carry whole rows`,
    });
  }
  return out;
}

/** Throws the first settings problem as a ConnectorError (a read cannot go on without them). */
export function requireSettings(f: ServerFacts): void {
  const [problem] = settingProblems(f);
  if (problem) throw new ConnectorError('UNSUPPORTED_OPERATION', problem.message);
}

/** The GTID position at a binlog position (MariaDB's BINLOG_GTID_POS); undefined elsewhere. */
export async function gtidAt(
  connection: mysql.Connection,
  facts: ServerFacts,
  p: Position,
): Promise<string | undefined> {
  if (!facts.mariadb) return undefined;
  const rows = await queryMysql<any[]>(
    connection,
    `SELECT BINLOG_GTID_POS(${connection.escape(p.file)}, ${Number(p.pos)}) AS gtid`,
  );
  const gtid = rows[0]?.gtid;
  return typeof gtid === 'string' ? gtid : undefined;
}

/** The end of the binlog now: where a read that starts now stops. */
export async function currentPosition(connection: mysql.Connection, facts: ServerFacts): Promise<Position> {
  const rows = await queryMysql<any[]>(connection, 'SHOW MASTER STATUS');
  const row = rows[0];
  if (!row) {
    throw new ConnectorError('UNSUPPORTED_OPERATION', 'the binary log is off: start the server with log_bin');
  }
  const p: Position = { file: String(row.File), pos: Number(row.Position) };
  const gtid = facts.mariadb ? await gtidAt(connection, facts, p) : undefined;
  return gtid === undefined ? p : { ...p, gtid };
}

export type BinlogFile = { name: string; size: number };

/**
 * The server's binlog retention in seconds (binlog_expire_logs_seconds, or expire_logs_days
 * where the server has only that); null when binlogs are never purged by age.
 */
export async function binlogRetentionSeconds(connection: mysql.Connection): Promise<number | null> {
  let seconds: number;
  try {
    const [row] = await queryMysql<any[]>(connection, 'SELECT @@GLOBAL.binlog_expire_logs_seconds AS s');
    seconds = Number(row.s);
  } catch (err: any) {
    if (err?.errno !== 1193) throw err;
    const [row] = await queryMysql<any[]>(connection, 'SELECT @@GLOBAL.expire_logs_days AS d');
    seconds = Math.round(Number(row.d) * 86_400);
  }
  return Number.isFinite(seconds) && seconds > 0 ? seconds : null;
}

export async function binaryLogs(connection: mysql.Connection): Promise<BinlogFile[]> {
  const rows = await queryMysql<any[]>(connection, 'SHOW BINARY LOGS');
  return rows.map((r) => ({ name: String(r.Log_name), size: Number(r.File_size) }));
}

/**
 * Fails clearly when the server no longer keeps the binlog a position needs (purged after
 * binlog_expire_logs_seconds / expire_logs_days): the changes since then are gone, and only a
 * new snapshot can start the capture again.
 */
export function requireRetained(p: Position, files: BinlogFile[]): void {
  if (files.some((f) => f.name === p.file)) return;
  const oldest = files[0]?.name ?? 'none';
  const expired = files.length > 0 && comparePositions(p, { file: oldest, pos: 4 }) < 0;
  throw new ConnectorError(
    'UNSUPPORTED_OPERATION',
    expired
      ? `the committed position ${positionText(p)} is older than the oldest binlog the server keeps (${oldest}): ` +
          'the binlogs were purged (binlog_expire_logs_seconds / expire_logs_days); raise the retention and ' +
          'reset the step cursor to take a new snapshot'
      : `the committed position ${positionText(p)} names a binlog the server does not have (it keeps ${files
          .map((f) => f.name)
          .join(', ')}): was the server replaced? Reset the step cursor to take a new snapshot`,
  );
}

/** Bytes of binlog from `p` to the end of the newest file (0 at the end; null when not kept). */
export function bytesBehind(p: Position, files: BinlogFile[]): number | null {
  const index = files.findIndex((f) => f.name === p.file);
  if (index < 0) return null;
  let bytes = Math.max(0, files[index].size - p.pos);
  for (const f of files.slice(index + 1)) bytes += f.size;
  return bytes;
}
