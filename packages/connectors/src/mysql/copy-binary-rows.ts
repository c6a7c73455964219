import { writeNumeric } from './copy-binary-numeric';
import { BOOL, type Code, INT2, INT4, INT8, NUMERIC, RAW, refuse, TIMESTAMP } from './copy-binary-plan';
import { BinaryDates, PG_EPOCH_DAYS } from './copy-binary-time';
import { BYTES, type ColumnKind } from './copy-text-rows';

// MySQL/MariaDB text-protocol rows written as PostgreSQL COPY binary for the target's column
// types, so the target's backend receives integers, timestamps and numerics instead of
// parsing their text (docs/benchmarks.md, "The data path toward its limit"). Each value is
// the server's text (as in copy-text-rows.ts) converted to what PostgreSQL's input function
// would make of that text: the same integer, the same numeric digits and display scale, the
// same timestamp. A value PostgreSQL's text input would refuse (a zero date, a boolean other
// than 0 or 1) fails the copy here. Which columns go so is copy-binary-plan.ts's; numerics are
// copy-binary-numeric.ts's, dates and timestamps copy-binary-time.ts's.

// The binary file's signature, flags and header extension length (COPY's binary format).
const HEADER = Buffer.from([
  0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
]);
const TWO_32 = 4294967296;

const view = (b: Buffer) => new DataView(b.buffer, b.byteOffset, b.byteLength);

// Big-endian writes by hand: Buffer's write*BE check their arguments on every call.
function i16(out: Buffer, pos: number, v: number): void {
  out[pos] = v >>> 8;
  out[pos + 1] = v;
}
function i32(out: Buffer, pos: number, v: number): void {
  out[pos] = v >>> 24;
  out[pos + 1] = v >>> 16;
  out[pos + 2] = v >>> 8;
  out[pos + 3] = v;
}
/** A signed 64-bit integer given as a number whose magnitude is below 2^53. */
function i53(out: Buffer, pos: number, v: number): void {
  const hi = Math.floor(v / TWO_32);
  i32(out, pos, hi);
  i32(out, pos + 4, v - hi * TWO_32);
}

/**
 * Rows in, COPY binary chunks out, with the interface of CopyTextRows: `packet` takes a
 * text-protocol row from the wire, `values` the same row as mysql2 parsed it.
 */
export class CopyBinaryRows {
  rows = 0;
  private out: Buffer;
  private outView: DataView;
  private pos = 0;
  /** The last input buffer seen and a view of it. */
  private inBuf: Buffer | null = null;
  private inView: DataView = view(Buffer.alloc(0));
  private readonly dates = new BinaryDates();

  constructor(
    private readonly codes: Code[],
    private readonly names: string[],
    private readonly onChunk: (chunk: Buffer) => void,
    private readonly chunkSize = 128 * 1024,
    private readonly cursor: { index: number; see(value: string | Buffer | null): void } | null = null,
    private readonly kinds: ColumnKind[] = [],
  ) {
    this.out = Buffer.allocUnsafe(chunkSize);
    this.outView = view(this.out);
    this.pos = HEADER.copy(this.out, 0);
  }

  private room(n: number) {
    if (this.pos + n <= this.out.length) return;
    this.flush();
    if (n > this.out.length) {
      this.out = Buffer.allocUnsafe(n);
      this.outView = view(this.out);
    }
  }

  /** The most a value of `len` text bytes takes, length word included. */
  private static bound(len: number): number {
    // A numeric: 8 bytes of header and at most one 2-byte digit per 4 text bytes, plus one.
    return 4 + Math.max(8, 8 + 2 * (len + 2), len);
  }

  /** One row packet's payload, buf[start, end): length-encoded values, one per column. */
  packet(buf: Buffer, start: number, end: number): void {
    const codes = this.codes;
    const width = codes.length;
    // Per value at most 12 bytes beyond twice its text (a one-digit integer, a NULL).
    this.room(2 + width * 16 + 2 * (end - start) + 8);
    const out = this.out;
    const to = this.outView;
    if (buf !== this.inBuf) {
      this.inBuf = buf;
      this.inView = view(buf);
    }
    const from = this.inView;
    const cursor = this.cursor;
    let pos = this.pos;
    i16(out, pos, width);
    pos += 2;
    let p = start;
    for (let c = 0; c < width; c++) {
      let len = buf[p++];
      if (len >= 0xfb) {
        if (len === 0xfb) {
          i32(out, pos, -1);
          pos += 4;
          if (cursor !== null && cursor.index === c) cursor.see(null);
          continue;
        }
        if (len === 0xfc) {
          len = buf[p] | (buf[p + 1] << 8);
          p += 2;
        } else if (len === 0xfd) {
          len = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16);
          p += 3;
        } else {
          len = buf.readUInt32LE(p) + buf.readUInt32LE(p + 4) * 2 ** 32;
          p += 8;
        }
      }
      const e = p + len;
      if (e > end) throw new Error('a row packet ended inside a value');
      if (cursor !== null && cursor.index === c) cursor.see(this.cursorValue(buf, p, e, c));
      // The common values are written here (a call per value costs as much as the writing).
      const code = codes[c];
      if (code === RAW && len <= 32) {
        // Text as it is, copied four bytes at a time through DataViews (TurboFan inlines their
        // accessors; Buffer.copy makes a typed-array view per call).
        to.setInt32(pos, len);
        pos += 4;
        if (len >= 8) for (; e - p >= 4; p += 4, pos += 4) to.setUint32(pos, from.getUint32(p));
        for (; p < e; p++) out[pos++] = buf[p];
        continue;
      }
      if ((code === INT4 || code === INT8) && len <= 15) {
        const negative = buf[p] === 0x2d;
        let q = negative ? p + 1 : p;
        let v = 0;
        for (; q < e; q++) {
          const d = buf[q] - 0x30;
          if (!(d >= 0 && d <= 9)) break;
          v = v * 10 + d;
        }
        if (q === e && len > (negative ? 1 : 0)) {
          if (negative) v = -v;
          if (code === INT4) {
            to.setInt32(pos, 4);
            to.setInt32(pos + 4, v);
            pos += 8;
          } else {
            const hi = Math.floor(v / TWO_32);
            to.setInt32(pos, 8);
            to.setInt32(pos + 4, hi);
            to.setUint32(pos + 8, v - hi * TWO_32);
            pos += 12;
          }
          p = e;
          continue;
        }
        // Not an integer: value() says so.
      }
      pos = this.value(out, pos, buf, p, e, c);
      p = e;
    }
    if (p !== end) throw new Error('a row packet holds more than its columns');
    this.pos = pos;
    this.rows++;
    if (pos >= this.chunkSize) this.flush();
  }

  /** One row as mysql2 parsed it (text protocol, dateStrings, bigNumberStrings). */
  values(row: unknown[]): void {
    const width = this.codes.length;
    const bytes = row.map((v) =>
      v === null || v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(String(v), 'utf8'),
    );
    this.room(2 + bytes.reduce((n, b) => n + CopyBinaryRows.bound(b?.length ?? 0), 0));
    i16(this.out, this.pos, width);
    this.pos += 2;
    for (let c = 0; c < width; c++) {
      const b = bytes[c];
      if (this.cursor?.index === c) this.cursor.see(b === null ? null : this.cursorValue(b, 0, b.length, c));
      if (b === null) {
        i32(this.out, this.pos, -1);
        this.pos += 4;
      } else this.pos = this.value(this.out, this.pos, b, 0, b.length, c);
    }
    this.rows++;
    if (this.pos >= this.chunkSize) this.flush();
  }

  /** Writes buf[p, e) as column c's value (length word, then the value); the new position. */
  private value(out: Buffer, pos: number, buf: Buffer, p: number, e: number, c: number): number {
    switch (this.codes[c]) {
      case RAW: {
        i32(out, pos, e - p);
        pos += 4;
        if (e - p > 32) return pos + buf.copy(out, pos, p, e);
        for (; p < e; p++) out[pos++] = buf[p];
        return pos;
      }
      case INT2:
      case INT4:
      case INT8: {
        // The integer the server printed (its type bounds it, see copyBinaryPlan), parsed here
        // rather than in a function of its own: this is most of the values of most rows.
        const code = this.codes[c];
        if (code === INT8 && e - p > 15) {
          i32(out, pos, 8);
          out.writeBigInt64BE(BigInt(this.checkedInteger(buf, p, e, c)), pos + 4);
          return pos + 12;
        }
        const negative = buf[p] === 0x2d;
        let q = negative ? p + 1 : p;
        if (q === e) throw refuse(this.names[c], 'not an integer');
        let v = 0;
        for (; q < e; q++) {
          const d = buf[q] - 0x30;
          if (!(d >= 0 && d <= 9)) throw refuse(this.names[c], 'not an integer');
          v = v * 10 + d;
        }
        if (negative) v = -v;
        if (code === INT4) {
          i32(out, pos, 4);
          i32(out, pos + 4, v);
          return pos + 8;
        }
        if (code === INT2) {
          i32(out, pos, 2);
          i16(out, pos + 4, v);
          return pos + 6;
        }
        i32(out, pos, 8);
        i53(out, pos + 4, v);
        return pos + 12;
      }
      case BOOL: {
        // boolin reads "0" and "1"; the server prints tinyint(1) so.
        const b = e - p === 1 ? buf[p] : 0;
        if (b !== 0x30 && b !== 0x31) throw refuse(this.names[c], 'not a boolean (0 or 1)');
        i32(out, pos, 1);
        out[pos + 4] = b - 0x30;
        return pos + 5;
      }
      case NUMERIC:
        return writeNumeric(this.outView, pos, buf, p, e, this.names[c]);
      case TIMESTAMP:
        return this.dates.timestamp(out, this.outView, pos, buf, p, e, this.names[c]);
      default: {
        if (e - p !== 10) throw refuse(this.names[c], 'not a date');
        i32(out, pos, 4);
        i32(out, pos + 4, this.dates.days(buf, p, this.names[c]) - PG_EPOCH_DAYS);
        return pos + 8;
      }
    }
  }

  private checkedInteger(buf: Buffer, p: number, e: number, c: number): string {
    const text = buf.toString('latin1', p, e);
    if (!/^-?\d+$/.test(text)) throw refuse(this.names[c], 'not an integer');
    return text;
  }

  private cursorValue(buf: Buffer, p: number, end: number, c: number): string | Buffer {
    return this.kinds[c] === BYTES ? Buffer.from(buf.subarray(p, end)) : buf.toString('utf8', p, end);
  }

  /** Hands out what is written so far. */
  flush(): void {
    if (this.pos === 0) return;
    const chunk = this.out.subarray(0, this.pos);
    this.out = Buffer.allocUnsafe(this.chunkSize);
    this.outView = view(this.out);
    this.pos = 0;
    this.onChunk(chunk);
  }

  /** The trailer (a field count of -1), then the last chunk. */
  finish(): void {
    this.room(2);
    i16(this.out, this.pos, -1);
    this.pos += 2;
    this.flush();
  }
}
