import { ConnectorError } from '../../types';

// Binlog positions and the checkpoint text of a MySQL/MariaDB capture (docs/connectors/mysql.md
// "Positions and retention"). A position is a binlog file and the offset
// just past a committed transaction; on MariaDB it also carries the GTID position there
// (`domain-server-sequence`, for a failover to a replica of the same domain). The checkpoint
// is JSON: either a stream position, or the progress of an initial snapshot.

export type Position = { file: string; pos: number; gtid?: string };

/** The part of a table an initial snapshot copied as of one position. */
export type Chunk = {
  /** The greatest key copied (a single integer key), or null: the rest of the table. */
  hi: string | null;
  at: Position;
};

/** Snapshot chunks by table, for changes between the first chunk's position and the last's. */
export type Chunks = Record<string, Chunk[]>;

export type Checkpoint = (
  | { phase: 'stream'; at: Position; window?: { until: Position; chunks: Chunks } }
  | {
      phase: 'snapshot';
      /** The first chunk's position: where the stream starts once the snapshot is complete. */
      from: Position;
      /** Index of the table being copied (in the operation's order). */
      table: number;
      /** The greatest key copied from that table (single integer keys), or null. */
      after: string | null;
      chunks: Chunks;
    }
) & {
  /** The operation's tables when the checkpoint was written (a snapshot covers these). */
  tables?: string[];
};

export const positionText = (p: Position) => `${p.file}:${p.pos}`;

function fileNumber(file: string): number {
  const m = /\.(\d+)$/.exec(file);
  return m ? Number(m[1]) : Number.NaN;
}

/** Negative, zero or positive as `a` comes before, at or after `b`. */
export function comparePositions(a: Position, b: Position): number {
  if (a.file !== b.file) {
    const fa = fileNumber(a.file);
    const fb = fileNumber(b.file);
    return Number.isNaN(fa) || Number.isNaN(fb) ? a.file.localeCompare(b.file) : fa - fb;
  }
  return a.pos - b.pos;
}

const invalid = () =>
  new ConnectorError(
    'INVALID_STATEMENT',
    'the committed position is not a MySQL/MariaDB capture checkpoint; reset the step cursor to start again from a snapshot',
  );

function asPosition(v: any): Position {
  if (!v || typeof v.file !== 'string' || !Number.isSafeInteger(v.pos)) throw invalid();
  return typeof v.gtid === 'string'
    ? { file: v.file, pos: v.pos, gtid: v.gtid }
    : { file: v.file, pos: v.pos };
}

/** A key bound: integer text only (it is written into the snapshot's query). */
function integerText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string' || !/^-?\d{1,20}$/.test(v)) throw invalid();
  return v;
}

function asChunks(v: any): Chunks {
  if (!v || typeof v !== 'object') throw invalid();
  const out: Chunks = {};
  for (const [table, list] of Object.entries(v)) {
    if (!Array.isArray(list)) throw invalid();
    out[table] = list.map((c: any) => ({ hi: integerText(c?.hi), at: asPosition(c?.at) }));
  }
  return out;
}

export function parseCheckpoint(text: string): Checkpoint {
  let v: any;
  try {
    v = JSON.parse(text);
  } catch {
    throw invalid();
  }
  const named = Array.isArray(v?.tables) && v.tables.every((t: unknown) => typeof t === 'string');
  const tables = named ? { tables: v.tables as string[] } : {};
  if (v?.phase === 'stream') {
    const at = asPosition(v.at);
    if (!v.window) return { phase: 'stream', at, ...tables };
    return {
      phase: 'stream',
      at,
      window: { until: asPosition(v.window.until), chunks: asChunks(v.window.chunks) },
      ...tables,
    };
  }
  if (v?.phase === 'snapshot' && Number.isSafeInteger(v.table)) {
    return {
      ...tables,
      phase: 'snapshot',
      from: asPosition(v.from),
      table: v.table,
      after: integerText(v.after),
      chunks: asChunks(v.chunks),
    };
  }
  throw invalid();
}

export const checkpointText = (c: Checkpoint) => JSON.stringify(c);
