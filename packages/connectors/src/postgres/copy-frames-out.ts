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

// `COPY … TO STDOUT` read straight off the connection's socket as the server framed it: the
// CopyData messages themselves, headers and all. A server's CopyData out and a client's
// CopyData into `COPY … FROM STDIN` are the same message, so the PostgreSQL sink writes these
// chunks to the target's socket, each chunk's messages joined into one (copy-frames-in.ts);
// nothing per row runs here but reading its header (docs/benchmarks.md, "The data path toward its limit").
//
// Every chunk handed on holds whole CopyData messages only: the run of whole messages inside
// one socket chunk as a slice of it, and a message cut by a chunk boundary completed in a
// buffer of its own first. So a failure between two chunks leaves the target at a message
// boundary, where a CopyFail can follow. Notices and parameter changes sent during the copy
// are dropped, never handed on. CopyDone hands the connection back to pg, which reads the
// command tag (the row count) and ReadyForQuery; an ErrorResponse is handed back unread, and
// pg reports it through handleError. The chunks end at ReadyForQuery, once `rowCount` is known.
// The socket is read only when the consumer asks for the next chunk (no buffer in between).
// With `lead`, that SELECT goes in the same message ahead of the COPY and its answer is read off
// the front (leading-select.ts): `leading` is its first column.

export class CopyFramesOut implements pg.Submittable, AsyncIterable<Buffer> {
  /** Rows of the COPY's command tag, once the chunks ended. */
  rowCount = 0;
  /** Messages handed on (binary: one per row, the file header riding on the first, and the trailer's). */
  messages = 0;
  private connection: Connection | null = null;
  private pgHandler: ((b: Buffer) => void) | null = null;
  private readonly onReadable = () => this.wake();
  /** Chunks parsed and not handed on yet. */
  private readonly queue: Buffer[] = [];
  private ended = false;
  private failure: Error | null = null;
  private waiter: (() => void) | null = null;
  /** Body bytes of a dropped message not read yet. */
  private remaining = 0;
  /** A message header cut by a chunk boundary. */
  private readonly head = Buffer.alloc(5);
  private headLength = 0;
  /** A CopyData message cut by a chunk boundary, being completed, and its bytes so far. */
  private pending: Buffer | null = null;
  private pendingFill = 0;
  private readonly lead: LeadingSelect | null;

  constructor(
    private readonly text: string,
    private readonly leadText?: string,
  ) {
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

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return {
      next: () => this.next(),
      return: async () => {
        // The consumer stopped early: the session is closed by its owner (mid-copy, never reused).
        this.queue.length = 0;
        this.ended = true;
        return { done: true, value: undefined };
      },
    };
  }

  private async next(): Promise<IteratorResult<Buffer>> {
    for (;;) {
      const chunk = this.queue.shift();
      if (chunk) return { done: false, value: chunk };
      if (this.failure) throw this.failure;
      if (this.ended) return { done: true, value: undefined };
      const read = this.pgHandler ? this.connection?.stream.read() : null;
      if (read) {
        this.readChunk(read);
        continue;
      }
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  /** Whole CopyData messages of one socket chunk, as they are; the rest goes back to pg. */
  private readChunk(read: Buffer): void {
    const chunk = this.lead ? this.lead.through(read) : read;
    if (chunk === null) return;
    const n = chunk.length;
    let r = 0;
    /** Where the run of whole CopyData messages being gathered in this chunk starts. */
    let run = -1;
    while (r < n) {
      if (this.pending) {
        const p = this.pending;
        const take = Math.min(p.length - this.pendingFill, n - r);
        chunk.copy(p, this.pendingFill, r, r + take);
        this.pendingFill += take;
        r += take;
        if (this.pendingFill === p.length) this.complete();
        continue;
      }
      if (this.remaining > 0) {
        // The body of a dropped message.
        const take = Math.min(this.remaining, n - r);
        r += take;
        this.remaining -= take;
        continue;
      }
      const start = r;
      let code = 0;
      let length = 0;
      const cut = this.headLength > 0 || n - r < 5;
      if (!cut) {
        code = chunk[r];
        length = chunk.readUInt32BE(r + 1) - 4;
        if (code === COPY_DATA && r + 5 + length <= n) {
          if (run < 0) run = r;
          this.messages++;
          r += 5 + length;
          continue;
        }
      }
      if (run >= 0) this.queue.push(chunk.subarray(run, start));
      run = -1;
      if (cut) {
        const more = Math.min(5 - this.headLength, n - r);
        chunk.copy(this.head, this.headLength, r, r + more);
        this.headLength += more;
        r += more;
        if (this.headLength < 5) break;
        this.headLength = 0;
        code = this.head[0];
        length = this.head.readUInt32BE(1) - 4;
      }
      if (code === COPY_DATA) {
        // Cut by the chunk's end: completed in a buffer of its own.
        this.messages++;
        this.pending = Buffer.allocUnsafe(5 + length);
        this.pendingFill = 0;
        if (cut) {
          this.head.copy(this.pending, 0, 0, 5);
          this.pendingFill = 5;
          if (length === 0) this.complete();
        }
        continue;
      }
      if (SKIPPED.has(code)) {
        if (!cut) r += 5;
        this.remaining = length;
        continue;
      }
      // CopyDone (consumed here, as pg expects nothing of it) or anything else (an error):
      // pg reads on from there.
      const rest =
        code === COPY_DONE && length === 0
          ? chunk.subarray(cut ? r : r + 5)
          : cut
            ? Buffer.concat([this.head, chunk.subarray(r)])
            : chunk.subarray(start);
      this.detach(rest);
      return;
    }
    if (run >= 0) this.queue.push(chunk.subarray(run, r));
  }

  private complete(): void {
    this.queue.push(this.pending!);
    this.pending = null;
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
    this.ended = true;
    this.wake();
  }

  handleError(err: Error): void {
    this.connection = null;
    this.failure = err;
    this.wake();
  }
}
