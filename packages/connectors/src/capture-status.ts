// What a change data capture looks like on its server (docs/cdc.md): its status and lag, the
// findings of a check, a log's retention. Plain data, read by the `changes` capability
// (types.ts) and shown by the server's capture routes.

/**
 * A log the server purges by age (MySQL/MariaDB binlog retention): the retention in seconds
 * (null: never purged by age) and whether the committed position is in the log file being
 * written now (which cannot be purged yet).
 */
export type CaptureRetention = { seconds: number | null; in_current_log: boolean };

/** A table that cannot be captured, and why (validation's finding). */
export type CaptureFinding = { table: string; code: string; message: string };

/** One capture on the server, with its lag. */
export type CaptureStatus = {
  name: string;
  /** A reader is attached right now. */
  active: boolean;
  /** The position the server keeps the log from (the slot's confirmed flush; MySQL: null). */
  confirmed_position: string | null;
  /**
   * Bytes of log the server retains for the capture (PostgreSQL: WAL from the slot's
   * restart_lsn to the current position, what fills the disk); null when unknown.
   */
  lag_bytes: number | null;
  /** PostgreSQL 13+: the slot's wal_status (`reserved`, `extended`, `unreserved`, `lost`); else absent or null. */
  wal_status?: string | null;
  /** PostgreSQL 13+: bytes the slot may still fall behind before max_slot_wal_keep_size invalidates it (null: no limit). */
  safe_wal_bytes?: number | null;
  /** A log purged by age (MySQL/MariaDB): the server's retention for the committed position. */
  retention?: CaptureRetention;
};
