// A SELECT that rides in the same simple-protocol message as a `COPY … TO STDOUT`, ahead of it
// (`SELECT …; COPY …`): the server runs the two in order in the open transaction and answers
// both at once, so the statement before the copy costs no round trip of its own (the PostgreSQL
// source lifts its statement limit this way: copy-out.ts). The copy's readers take the socket
// from pg before the first answer (copy-out-socket.ts), so the SELECT's answer reaches them
// first; this reads it off the front and keeps its first row's first column. The server (11 and
// later) starts each statement of such a message under the statement_timeout in force when it
// starts, so a SELECT that sets it to 0 for the transaction leaves the COPY after it unbounded.

const ROW_DESCRIPTION = 0x54; // 'T'
const DATA_ROW = 0x44; // 'D'
const COMMAND_COMPLETE = 0x43; // 'C'
const NOTICE = 0x4e; // 'N'
const PARAMETER_STATUS = 0x53; // 'S'
const NOTIFICATION = 0x41; // 'A'
/** Messages of the SELECT's answer (and what the server may send beside it) read off here. */
const ANSWER = new Set([ROW_DESCRIPTION, DATA_ROW, COMMAND_COMPLETE, NOTICE, PARAMETER_STATUS, NOTIFICATION]);

/** The text of one message: the SELECT, then the statement. */
export const withLead = (text: string, lead: string | undefined) => (lead ? `${lead};\n${text}` : text);

export class LeadingSelect {
  /** The first column of the SELECT's first row, as text (null when NULL or not answered). */
  value: string | null = null;
  private rows = 0;
  private done = false;
  /** Bytes of a message cut by a chunk boundary. */
  private held: Buffer | null = null;

  /**
   * A socket chunk for the copy's reader: once the SELECT's answer is read off, the bytes from the
   * first message that is not part of it on (the copy's CopyOutResponse, or an ErrorResponse);
   * null while the answer is still arriving; every later chunk as it is.
   */
  through(chunk: Buffer): Buffer | null {
    if (this.done) return chunk;
    const rest = this.take(chunk);
    if (rest !== null) this.done = true;
    return rest;
  }

  private take(chunk: Buffer): Buffer | null {
    const buf = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = null;
    let at = 0;
    while (at < buf.length) {
      // The first byte tells a message that is not the answer's: the reader takes it from there.
      const code = buf[at];
      if (!ANSWER.has(code)) return buf.subarray(at);
      if (buf.length - at < 5) break;
      const end = at + 1 + buf.readUInt32BE(at + 1);
      if (end > buf.length) break;
      if (code === DATA_ROW && this.rows++ === 0) this.value = firstColumn(buf.subarray(at + 5, end));
      at = end;
    }
    if (at < buf.length) this.held = Buffer.from(buf.subarray(at));
    return null;
  }
}

/** A DataRow body's first column as text: a field count, then each field's length and bytes. */
function firstColumn(body: Buffer): string | null {
  if (body.length < 6 || body.readUInt16BE(0) === 0) return null;
  const length = body.readInt32BE(2);
  return length < 0 ? null : body.toString('utf8', 6, 6 + length);
}
