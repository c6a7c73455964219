import type { Readable } from 'node:stream';
import type pg from 'pg';
import { quoteIdent } from '../relational/identifiers';
import { ConnectorError } from '../types';
import { destroy } from './connect';
import { copyFramesIn } from './copy-frames-in';
import { LIFT_SQL, RESTORE_SQL } from './statement-limit';

// The raw COPY-in writer: bytes already in one of COPY's formats go into a table unchanged, on
// a client the caller owns and inside the caller's transaction (nothing here commits). Used by
// the PostgreSQL sink for COPY pass-through from a PostgreSQL source, and by anything else that
// produces COPY input itself (a DuckDB CSV export, say).
//
// One COPY statement carries the whole stream, so the server's statement_timeout is lifted for
// it (restored afterwards) and replaced by an idle bound: the copy fails with TIMEOUT when no
// byte moved for `idleTimeoutMs` — a stalled source or a server that stops reading.

export type CopyInFormat =
  | { kind: 'binary' }
  | { kind: 'text' }
  | { kind: 'csv'; header?: boolean; delimiter?: string };

export type CopyInOptions = {
  /** The target table as SQL, already quoted (e.g. `"public"."orders"` or a temp table name). */
  table: string;
  /** Column names in the order the stream carries them; quoted here. */
  columns: string[];
  format: CopyInFormat;
  /**
   * The bytes, in `format`; read to the end. The client must be inside a transaction (the
   * lifted statement_timeout is local to it).
   */
  chunks: AsyncIterable<Uint8Array> | Readable;
  /** Fails the copy when no byte moved for this long (default: no bound). */
  idleTimeoutMs?: number;
  /**
   * The chunks are whole CopyData messages (a PostgreSQL source's COPY output as the server
   * framed it, copy-out-stream.ts): they go onto the socket unchanged (copy-frames-in.ts), and
   * the bytes counted include each message's 5-byte header.
   */
  framed?: boolean;
  /**
   * Leaves statement_timeout lifted after the copy and hands back the value to set it to
   * (`lifted`): the caller sets it back with its next statements, in one round trip.
   */
  keepLifted?: boolean;
  /**
   * The caller already lifted statement_timeout in this transaction (with its statements before,
   * in their round trip) and this was the value before: no round trip of its own for it here.
   */
  liftedFrom?: string;
};

export type CopyInResult = {
  /** Rows the server reports (COPY's command tag). */
  rows: number;
  /** Bytes sent. */
  bytes: number;
  /** With `keepLifted`: the statement_timeout the transaction had before the copy. */
  lifted?: string;
};

function withClause(f: CopyInFormat): string {
  if (f.kind !== 'csv') return `(FORMAT ${f.kind})`;
  const opts = ['FORMAT csv'];
  if (f.header) opts.push('HEADER true');
  if (f.delimiter && f.delimiter !== ',') opts.push(`DELIMITER '${f.delimiter.replace(/'/g, "''")}'`);
  return `(${opts.join(', ')})`;
}

/**
 * Streams `chunks` into `table (columns)` with `COPY … FROM STDIN`. Resolves with the rows the
 * server counted and the bytes sent; rejects with the driver's error (the caller maps it) or a
 * TIMEOUT ConnectorError after an idle stretch, in which case the client is destroyed.
 */
export async function copyIn(client: pg.Client, opts: CopyInOptions): Promise<CopyInResult> {
  const cols = opts.columns.map((c) => quoteIdent(c, 'postgres')).join(', ');
  const before =
    opts.liftedFrom !== undefined ? opts.liftedFrom : (await client.query<{ t: string }>(LIFT_SQL)).rows[0].t;
  let bytes = 0;
  let timer: NodeJS.Timeout | undefined;
  let idle: ConnectorError | null = null;
  const text = `COPY ${opts.table} (${cols}) FROM STDIN ${withClause(opts.format)}`;
  const arm = () => {
    if (opts.idleTimeoutMs === undefined) return;
    if (timer) {
      timer.refresh();
      return;
    }
    timer = setTimeout(() => {
      idle = new ConnectorError(
        'TIMEOUT',
        `the copy moved no data for ${Math.round(opts.idleTimeoutMs! / 1000)} s and was stopped`,
      );
      destroy(client);
    }, opts.idleTimeoutMs);
  };
  const sent = (chunk: Uint8Array) => {
    bytes += chunk.byteLength;
    arm();
  };
  let rows: number;
  arm();
  try {
    // Framed or not, the chunks go onto the socket as they come (unframed, each behind the
    // header that makes it a CopyData message), with the socket's backpressure.
    rows = await copyFramesIn(client, text, opts.chunks, sent, opts.framed !== true);
  } catch (err) {
    throw idle ?? err;
  } finally {
    clearTimeout(timer);
  }
  if (opts.keepLifted) return { rows, bytes, lifted: before };
  await client.query(RESTORE_SQL, [before]);
  return { rows, bytes };
}
