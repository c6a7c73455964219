import { ConnectorError } from '../../types';
import { isLsn } from './lsn';

// The checkpoint text of a PostgreSQL capture (docs/cdc.md "Positions and checkpoints"): JSON,
// committed by the server only after every sink committed. While the initial snapshot is being
// copied it records how far (table and last key); afterwards, the log position the next run
// reads from. `start` is the slot's consistent point: where the changes after the snapshot begin.

export type SnapshotProgress = {
  /** Index in `tables` of the table being copied. */
  table: number;
  /** The last key copied of that table, as text per key column; null: from its first row. */
  key: string[] | null;
};

export type CaptureCursor = {
  v: 1;
  /** The tables the capture covers, as the operation names them. */
  tables: string[];
  start: string;
  /** While copying the snapshot. */
  snapshot: SnapshotProgress | null;
  /** Changes committed up to here were handed on (equal to `start` right after the snapshot). */
  lsn: string;
};

export function encodeCursor(c: CaptureCursor): string {
  return JSON.stringify(c);
}

const broken = () =>
  new ConnectorError(
    'INVALID_STATEMENT',
    "the step's checkpoint is not a PostgreSQL change-capture position; reset the pipeline's checkpoints to take a new snapshot",
  );

export function decodeCursor(text: string): CaptureCursor {
  let c: any;
  try {
    c = JSON.parse(text);
  } catch {
    throw broken();
  }
  const okSnapshot =
    c?.snapshot === null ||
    (Number.isInteger(c?.snapshot?.table) &&
      (c.snapshot.key === null ||
        (Array.isArray(c.snapshot.key) && c.snapshot.key.every((k: unknown) => typeof k === 'string'))));
  if (
    c?.v !== 1 ||
    !Array.isArray(c.tables) ||
    !c.tables.every((t: unknown) => typeof t === 'string') ||
    !isLsn(c.start) ||
    !isLsn(c.lsn) ||
    !okSnapshot
  ) {
    throw broken();
  }
  return c as CaptureCursor;
}
