import { ConnectorError } from '../types';
import { BYTES, type ColumnKind } from './copy-text-rows';
import type { Field } from './operations';

// MySQL/MariaDB text-protocol rows written as PostgreSQL COPY binary for the target's column
// types, so the target's backend receives integers, timestamps and numerics instead of
// parsing their text (docs/benchmarks.md, "The data path toward its limit"). Each value is
// the server's text (as in copy-text-rows.ts) converted to what PostgreSQL's input function
// would make of that text: the same integer, the same numeric digits and display scale, the
// same timestamp. A value PostgreSQL's text input would refuse (a zero date, a boolean other
// than 0 or 1) fails the copy here. Only pairs whose result is certain are planned; any other
// column keeps the whole result on COPY text (`copyBinaryPlan` says why).

/** How one value is written. */
const RAW = 0; // its bytes, as text/varchar/bpchar (the input function checks UTF-8) or bytea
const INT2 = 1;
const INT4 = 2;
const INT8 = 3;
const BOOL = 4;
const NUMERIC = 5;
const TIMESTAMP = 6;
const DATE = 7;
export type Code = number;

// PostgreSQL type OIDs (pg_type.dat).
const OID = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  bpchar: 1042,
  varchar: 1043,
  date: 1082,
  timestamp: 1114,
  numeric: 1700,
};

const UNSIGNED = 32;
/** MySQL wire type codes of the integer types → bits they need in PostgreSQL, signed / unsigned. */
const INTEGER_BITS: Record<number, [number, number]> = {
  1: [16, 16], // tinyint
  2: [16, 32], // smallint
  9: [32, 32], // mediumint
  3: [32, 64], // int
  8: [64, 65], // bigint (unsigned: none of PostgreSQL's integers)
  13: [16, 16], // year
};
const DECIMAL_TYPES = new Set([0, 246]);
const DATETIME_TYPES = new Set([7, 12]); // timestamp, datetime
const DATE_TYPE = 10;

export type BinaryTarget = { oid: number; name: string };

/** How each column goes into COPY binary for these targets, or why the rows stay COPY text. */
export function copyBinaryPlan(
  fields: Field[],
  kinds: ColumnKind[],
  targets: BinaryTarget[],
): { codes: Code[] } | { reason: string } {
  if (targets.length !== fields.length) return { reason: 'the target has another number of columns' };
  const codes: Code[] = [];
  for (const [i, f] of fields.entries()) {
    const t = targets[i];
    const bits = INTEGER_BITS[f.columnType];
    const need = bits === undefined ? 0 : bits[(f.flags ?? 0) & UNSIGNED ? 1 : 0];
    let code: Code | null = null;
    if (t.oid === OID.text || t.oid === OID.varchar || t.oid === OID.bpchar) {
      // The text the COPY text path would carry, unescaped (floats never reach here: the sink
      // keeps them off text columns, see csv-in.ts).
      if (kinds[i] !== BYTES) code = RAW;
    } else if (t.oid === OID.bytea) {
      if (kinds[i] === BYTES) code = RAW;
    } else if (t.oid === OID.int2) {
      if (bits && need <= 16) code = INT2;
    } else if (t.oid === OID.int4) {
      if (bits && need <= 32) code = INT4;
    } else if (t.oid === OID.int8) {
      if (bits && need <= 64) code = INT8;
    } else if (t.oid === OID.bool) {
      if (bits) code = BOOL;
    } else if (t.oid === OID.numeric) {
      if (bits || DECIMAL_TYPES.has(f.columnType)) code = NUMERIC;
    } else if (t.oid === OID.timestamp) {
      if (DATETIME_TYPES.has(f.columnType) || f.columnType === DATE_TYPE) code = TIMESTAMP;
    } else if (t.oid === OID.date) {
      if (f.columnType === DATE_TYPE) code = DATE;
    }
    if (code === null)
      return {
        reason: `column ${f.name} goes into ${t.name}, which COPY binary does not write from this type`,
      };
    codes.push(code);
  }
  return { codes };
}

// The binary file's signature, flags and header extension length (COPY's binary format).
const HEADER = Buffer.from([
  0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
]);
/** Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01. */
const PG_EPOCH_DAYS = 10957;
const TWO_32 = 4294967296;

/** Days since 1970-01-01 of a proleptic Gregorian date (the usual era-based civil calendar). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** 10^(4 - n): scales a fraction group of n digits to four. */
const GROUP_SCALE = [10000, 1000, 100, 10, 1];
/** The most digits a numeric may have here (DECIMAL's are at most 65). */
const MAX_NUMERIC_DIGITS = 248;
/** 10^(6 - n): scales n fraction digits of a second to microseconds. */
const MICRO_SCALE = [1000000, 100000, 10000, 1000, 100, 10, 1];

const view = (b: Buffer) => new DataView(b.buffer, b.byteOffset, b.byteLength);

function refuse(column: string, what: string): ConnectorError {
  return new ConnectorError('QUERY_FAILED', `column ${column}: a value is ${what}`);
}

/** Two ASCII digits at buf[p] as a number, or -1. */
function two(buf: Buffer, p: number): number {
  const a = buf[p] - 0x30;
  const b = buf[p + 1] - 0x30;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

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
  /** The last date read (y·10⁴ + m·10² + d, of a valid date) and its days since 1970-01-01. */
  private lastDate = -1;
  private lastDays = 0;

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
        return this.numeric(pos, buf, p, e, c);
      case TIMESTAMP:
        return this.timestamp(out, pos, buf, p, e, c);
      default: {
        if (e - p !== 10) throw refuse(this.names[c], 'not a date');
        i32(out, pos, 4);
        i32(out, pos + 4, this.date(buf, p, c) - PG_EPOCH_DAYS);
        return pos + 8;
      }
    }
  }

  private checkedInteger(buf: Buffer, p: number, e: number, c: number): string {
    const text = buf.toString('latin1', p, e);
    if (!/^-?\d+$/.test(text)) throw refuse(this.names[c], 'not an integer');
    return text;
  }

  /**
   * `[-]digits[.digits]` as a numeric: base-10000 digits aligned on the decimal point, the
   * display scale the count of fraction digits (numeric_in's), leading and trailing zero digits
   * left out. One pass over the text, the digits written where they go (the header after).
   */
  private numeric(pos: number, buf: Buffer, p: number, e: number, c: number): number {
    const negative = buf[p] === 0x2d;
    if (negative) p++;
    let dot = p;
    while (dot < e && buf[dot] !== 0x2e) dot++;
    let i = p;
    while (i < dot && buf[i] === 0x30) i++;
    const scale = dot < e ? e - dot - 1 : 0;
    if (dot === p && scale === 0) throw refuse(this.names[c], 'not a number');
    if (dot - i + scale > MAX_NUMERIC_DIGITS) throw refuse(this.names[c], 'too long a number');
    const to = this.outView;
    const first = pos + 12;
    let q = first;
    /** Where the digits end without their trailing zero digits. */
    let kept = q;
    // The integer part: its first digit is not 0, so neither is its first base-10000 digit; the
    // first group takes what is left over from whole groups of four.
    let take = (dot - i) % 4 || 4;
    let g = 0;
    for (; i < dot; i++) {
      const d = buf[i] - 0x30;
      if (!(d >= 0 && d <= 9)) throw refuse(this.names[c], 'not a number');
      g = g * 10 + d;
      if (--take === 0) {
        to.setUint16(q, g);
        q += 2;
        if (g !== 0) kept = q;
        g = 0;
        take = 4;
      }
    }
    let weight = ((q - first) >> 1) - 1;
    // The fraction: groups of four from the point, the last one scaled up; zero groups before
    // the first nonzero one (a value below 1) only lower the weight.
    for (let f = dot + 1; f < e; ) {
      const n = Math.min(e - f, 4);
      g = 0;
      for (const fe = f + n; f < fe; f++) {
        const d = buf[f] - 0x30;
        if (!(d >= 0 && d <= 9)) throw refuse(this.names[c], 'not a number');
        g = g * 10 + d;
      }
      if (n < 4) g *= GROUP_SCALE[n];
      if (q === first && g === 0) {
        weight--;
        continue;
      }
      to.setUint16(q, g);
      q += 2;
      if (g !== 0) kept = q;
    }
    const keptCount = (kept - first) >> 1;
    to.setInt32(pos, 8 + 2 * keptCount);
    to.setInt16(pos + 4, keptCount);
    to.setInt16(pos + 6, keptCount === 0 ? 0 : weight);
    to.setUint16(pos + 8, negative && keptCount > 0 ? 0x4000 : 0);
    to.setInt16(pos + 10, scale);
    return kept;
  }

  /**
   * `YYYY-MM-DD` at buf[p] as days since 1970-01-01; refused where PostgreSQL's input refuses.
   * The last date is remembered: a column's dates often repeat from one row to the next.
   */
  private date(buf: Buffer, p: number, c: number): number {
    const cy = two(buf, p);
    const yy = two(buf, p + 2);
    const y = cy < 0 || yy < 0 ? -1 : cy * 100 + yy;
    const m = two(buf, p + 5);
    const d = two(buf, p + 8);
    const key = y * 10000 + m * 100 + d;
    if (key === this.lastDate && y >= 0 && m >= 0 && d >= 0 && buf[p + 4] === 0x2d && buf[p + 7] === 0x2d)
      return this.lastDays;
    if (
      y < 1 ||
      m < 1 ||
      m > 12 ||
      d < 1 ||
      buf[p + 4] !== 0x2d ||
      buf[p + 7] !== 0x2d ||
      d > (m === 2 && leap(y) ? 29 : MONTH_DAYS[m])
    )
      throw refuse(this.names[c], 'not a date PostgreSQL accepts (a zero or partial date)');
    this.lastDate = key;
    this.lastDays = daysFromCivil(y, m, d);
    return this.lastDays;
  }

  /** `YYYY-MM-DD[ HH:MM:SS[.f…]]` as microseconds since 2000-01-01. */
  private timestamp(out: Buffer, pos: number, buf: Buffer, p: number, e: number, c: number): number {
    const len = e - p;
    if (len < 10) throw refuse(this.names[c], 'not a timestamp');
    let seconds = (this.date(buf, p, c) - PG_EPOCH_DAYS) * 86400;
    let micros = 0;
    if (len > 10) {
      const h = two(buf, p + 11);
      const mi = two(buf, p + 14);
      const s = two(buf, p + 17);
      if (
        len < 19 ||
        buf[p + 10] !== 0x20 ||
        buf[p + 13] !== 0x3a ||
        buf[p + 16] !== 0x3a ||
        h < 0 ||
        h > 23 ||
        mi < 0 ||
        mi > 59 ||
        s < 0 ||
        s > 59 ||
        (len > 19 && (buf[p + 19] !== 0x2e || len === 20 || len > 26))
      )
        throw refuse(this.names[c], 'not a timestamp');
      seconds += h * 3600 + mi * 60 + s;
      for (let q = p + 20; q < e; q++) {
        const d = buf[q] - 0x30;
        if (!(d >= 0 && d <= 9)) throw refuse(this.names[c], 'not a timestamp');
        micros = micros * 10 + d;
      }
      if (len > 20) micros *= MICRO_SCALE[len - 20];
    }
    const to = this.outView;
    to.setInt32(pos, 8);
    // Within ±285 years of 2000 the microseconds are exact as a number.
    if (seconds < 9e9 && seconds > -9e9) {
      const v = seconds * 1e6 + micros;
      const hi = Math.floor(v / TWO_32);
      to.setInt32(pos + 4, hi);
      to.setUint32(pos + 8, v - hi * TWO_32);
    } else out.writeBigInt64BE(BigInt(seconds) * 1000000n + BigInt(micros), pos + 4);
    return pos + 12;
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
