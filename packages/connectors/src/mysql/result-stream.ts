import type mysql from 'mysql2';
import { deferred } from '../payloads/streams';
import type { Field } from './operations';

// One streamed result, read either as rows (mysql2's arrays, in batches) or as COPY input
// (CopyTextRows or CopyBinaryRows, in chunks): whoever consumes it first decides, and until then the socket is
// paused after the column definitions, so no row is parsed one way before the choice. Either
// way the socket is paused while enough is queued downstream, so the server blocks instead of
// filling our memory.
//
// As COPY input the row packets go to the encoder as they come off the wire: the query
// command's row handler is taken over for this one command (its column definitions, EOF and
// errors stay mysql2's). Where that handler is not there (another mysql2), mysql2's rows are
// encoded instead: slower, same bytes.

const BATCH = 5000;
/** Rows queued before the socket is paused: the next batch arrives while one is downstream. */
const AHEAD = 2 * BATCH;
/** COPY input queued before the socket is paused. */
const AHEAD_BYTES = 1 << 20;

/** Rows in, COPY input out (CopyTextRows, CopyBinaryRows). */
export type RowEncoder = {
  readonly rows: number;
  packet(buf: Buffer, start: number, end: number): void;
  values(row: unknown[]): void;
  /** Writes what ends the stream and hands out the last chunk. */
  finish(): void;
};

type RowHandler = (packet: RowPacket, connection: unknown) => unknown;
type RowPacket = { buffer: Buffer; offset: number; end: number; isEOF(): boolean };

export class ResultStream {
  private rows: unknown[][] = [];
  private chunks: Buffer[] = [];
  private queuedBytes = 0;
  private mode: 'open' | 'rows' | 'text' = 'open';
  private encoder: RowEncoder | null = null;
  private ended = false;
  private failure: unknown = null;
  private paused = false;
  private wake: (() => void) | null = null;
  private hasFields = false;
  /** Whether row packets reach the encoder raw (else mysql2's rows are encoded). */
  readonly raw: boolean;
  readonly fields = deferred<Field[] | null>();

  constructor(
    private readonly connection: mysql.Connection,
    sql: string,
    values: unknown[],
  ) {
    // Without templates the text protocol: no prepare round trip, and mysql2 parses text rows
    // markedly faster than binary ones (FLOAT then reads as the server prints it, 1.1, not as
    // the nearest double of the single-precision value). Templates are bound server-side.
    const cmd =
      values.length === 0
        ? connection.query({ sql, rowsAsArray: true })
        : connection.execute({ sql, values: values as any[], rowsAsArray: true });
    this.raw = values.length === 0 && this.takeRows(cmd as unknown as Record<string, unknown>);
    cmd.on('fields', (fields: Field[]) => {
      if (this.hasFields) return;
      this.hasFields = true;
      // Nothing is parsed until the consumer chose rows or text.
      if (Array.isArray(fields) && fields.length > 0 && this.mode === 'open') this.pause();
      this.fields.resolve(fields);
    });
    cmd.on('result', (row: unknown) => {
      if (!this.hasFields) return; // the OK packet of a statement without rows
      if (this.encoder) {
        this.encoder.values(row as unknown[]);
        this.queued();
        return;
      }
      this.rows.push(row as unknown[]);
      if (this.rows.length >= AHEAD) this.pause();
      this.notify();
    });
    cmd.on('end', () => {
      this.encoder?.finish();
      this.ended = true;
      this.fields.resolve(null);
      this.notify();
    });
    cmd.on('error', (err: unknown) => {
      this.failure = err;
      this.ended = true;
      this.fields.reject(err);
      this.notify();
    });
  }

  /** Puts our row handler on this command, when it has mysql2's shape for one. */
  private takeRows(cmd: Record<string, unknown>): boolean {
    const own = cmd.row as RowHandler | undefined;
    if (typeof own !== 'function' || typeof cmd.fieldsEOF !== 'function') return false;
    // mysql2 moves to `this.row` after the column definitions; every row handler call returns
    // the handler for the next packet.
    const row: RowHandler = (packet, connection) => {
      const encoder = this.encoder;
      if (encoder === null || packet.isEOF()) return own.call(cmd, packet, connection);
      if (this.failure) return row; // the consumer stops at the failure and drops the session
      try {
        encoder.packet(packet.buffer, packet.offset, packet.end);
      } catch (err) {
        this.failure = err;
        this.ended = true;
        this.notify();
        return row;
      }
      this.queued();
      return row;
    };
    cmd.row = row;
    return true;
  }

  private queued() {
    if (this.queuedBytes >= AHEAD_BYTES) this.pause();
  }

  private pause() {
    if (this.paused) return;
    this.paused = true;
    this.connection.pause();
  }

  private resume() {
    if (!this.paused) return;
    this.paused = false;
    this.connection.resume();
  }

  private notify() {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** Reads the result as rows. */
  asRows(): void {
    if (this.mode !== 'open') throw new Error('the result is already being read');
    this.mode = 'rows';
    this.resume();
  }

  /** Reads the result as COPY input through the encoder `make` returns (CopyTextRows, CopyBinaryRows). */
  asCopy<T extends RowEncoder>(make: (onChunk: (chunk: Buffer) => void) => T): T {
    if (this.mode !== 'open') throw new Error('the result is already being read');
    this.mode = 'text';
    const encoder = make((chunk) => {
      this.chunks.push(chunk);
      this.queuedBytes += chunk.length;
      this.notify();
    });
    this.encoder = encoder;
    this.resume();
    return encoder;
  }

  /** Resolves once a batch (rows) or a chunk (text) is ready, or the result ended. */
  async ready(): Promise<void> {
    const enough = () => (this.mode === 'text' ? this.chunks.length > 0 : this.rows.length >= BATCH);
    while (!this.ended && !enough()) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** The next batch of rows (after `ready`), or null at the end. */
  take(): unknown[][] | null {
    if (this.failure) throw this.failure;
    if (this.rows.length === 0) return null;
    const batch = this.rows.splice(0, BATCH);
    if (this.rows.length < AHEAD) this.resume();
    return batch;
  }

  /** The next chunk of COPY text (after `ready`), or null at the end. */
  takeChunk(): Buffer | null {
    if (this.failure) throw this.failure;
    const chunk = this.chunks.shift();
    if (chunk === undefined) return null;
    this.queuedBytes -= chunk.length;
    // Half drained before the socket reads again: one pause per few chunks, not per chunk.
    if (this.queuedBytes <= AHEAD_BYTES / 2) this.resume();
    return chunk;
  }
}
