import { Readable } from 'node:stream';
import type pg from 'pg';
import {
  COPY_DATA,
  COPY_DONE,
  type Connection,
  copyRows,
  giveSocket,
  SKIPPED,
  takeSocket,
} from './copy-out-socket';
import { LeadingSelect, withLead } from './leading-select';

// `COPY … TO STDOUT` read straight off the connection's socket, for the pass-through
// (docs/benchmarks.md, "The data path toward its limit"). PostgreSQL sends every row as its own
// CopyData message; this reader takes the socket's chunks as they come, drops each message's
// five header bytes by moving the row bytes down inside the same chunk (one memmove, no buffer
// per row), and hands on one slice per chunk. Notices and parameter changes sent during the
// copy are dropped; CopyDone hands the connection back to pg, which reads the command tag (the
// row count) and ReadyForQuery; an ErrorResponse is handed back unread, and pg reports it
// through handleError. The stream ends at ReadyForQuery, once `rowCount` is known. With `lead`,
// that SELECT goes in the same message ahead of the COPY and its answer is read off the front
// (leading-select.ts): `leading` is its first column.

export class CopyOutStream extends Readable implements pg.Submittable {
  /** Rows of the COPY's command tag, once the stream ended. */
  rowCount = 0;
  private connection: Connection | null = null;
  private pgHandler: ((b: Buffer) => void) | null = null;
  private readonly onReadable = () => this.forward();
  private wanted = false;
  private forwarding = false;
  /** Body bytes of the current message not read yet, and whether they are row bytes. */
  private remaining = 0;
  private rowBytes = false;
  /** A message header cut by a chunk boundary. */
  private head = Buffer.alloc(5);
  private headLength = 0;
  private readonly lead: LeadingSelect | null;

  constructor(
    private readonly text: string,
    private readonly leadText?: string,
  ) {
    super();
    this.lead = leadText ? new LeadingSelect() : null;
  }

  /** The first column of the leading SELECT's answer, once the copy began. */
  get leading(): string | null {
    return this.lead?.value ?? null;
  }

  /** The statements of its one message, the leading SELECT's first (as statements-at-once.ts lists them). */
  get statements(): string[] {
    return this.leadText ? [this.leadText, this.text] : [this.text];
  }

  submit(connection: unknown): void {
    const c = connection as Connection;
    this.connection = c;
    this.pgHandler = takeSocket(c, this.onReadable, withLead(this.text, this.leadText));
  }

  override _read(): void {
    this.wanted = true;
    this.forward();
  }

  private forward(): void {
    if (this.forwarding || !this.wanted || !this.connection || !this.pgHandler) return;
    this.forwarding = true;
    const stream = this.connection.stream;
    while (this.wanted && this.attached()) {
      const chunk = stream.read();
      if (chunk === null) break;
      this.readChunk(chunk);
    }
    this.forwarding = false;
  }

  private attached(): boolean {
    return this.pgHandler !== null;
  }

  /** Rows of one socket chunk, moved down over the headers; the rest goes back to pg. */
  private readChunk(read: Buffer): void {
    const chunk = this.lead ? this.lead.through(read) : read;
    if (chunk === null) return;
    const n = chunk.length;
    let r = 0;
    let w = 0;
    while (r < n) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, n - r);
        if (this.rowBytes) {
          if (w !== r) chunk.copyWithin(w, r, r + take);
          w += take;
        }
        r += take;
        this.remaining -= take;
        continue;
      }
      let code: number;
      let length: number;
      const start = r;
      const cut = !(this.headLength === 0 && n - r >= 5);
      if (!cut) {
        code = chunk[r];
        length = chunk.readUInt32BE(r + 1) - 4;
        r += 5;
      } else {
        const more = Math.min(5 - this.headLength, n - r);
        chunk.copy(this.head, this.headLength, r, r + more);
        this.headLength += more;
        r += more;
        if (this.headLength < 5) break;
        this.headLength = 0;
        code = this.head[0];
        length = this.head.readUInt32BE(1) - 4;
      }
      if (code === COPY_DATA || SKIPPED.has(code)) {
        this.remaining = length;
        this.rowBytes = code === COPY_DATA;
        continue;
      }
      // CopyDone (consumed here, as pg expects nothing of it) or anything else (an error):
      // pg reads on from there.
      this.emitRows(chunk, w);
      const rest =
        code === COPY_DONE && length === 0
          ? chunk.subarray(r)
          : cut
            ? Buffer.concat([this.head, chunk.subarray(r)])
            : chunk.subarray(start);
      this.detach(rest);
      return;
    }
    this.emitRows(chunk, w);
  }

  private emitRows(chunk: Buffer, w: number): void {
    if (w > 0 && !this.push(chunk.subarray(0, w))) this.wanted = false;
  }

  /** Gives the connection back to pg with the bytes after the copy. */
  private detach(rest: Buffer): void {
    const handler = this.pgHandler!;
    this.pgHandler = null;
    giveSocket(this.connection!, handler, this.onReadable, rest);
  }

  handleCommandComplete(msg: { text?: string }): void {
    this.rowCount = copyRows(msg) ?? this.rowCount;
  }

  handleReadyForQuery(): void {
    this.connection = null;
    this.push(null);
  }

  handleError(err: Error): void {
    this.connection = null;
    this.destroy(err);
  }
}
