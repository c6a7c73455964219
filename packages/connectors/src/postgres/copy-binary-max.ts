// The greatest value of one column in a binary COPY stream, found while the stream passes: the
// pass-through's incremental cursor without running the query a second time for its max().
// 'integer' columns are those whose binary form is a big-endian signed integer in SQL order:
// smallint, integer, bigint, date (days) and timestamp / timestamptz (microseconds; ±infinity
// are the extreme values, as in SQL). 'numeric' columns are compared in numeric's own binary
// form (base-10000 digits with a weight and a sign; -Infinity < negatives < 0 < positives <
// Infinity < NaN, as PostgreSQL orders them). NULLs are skipped, as max() skips them. Fields are
// skipped by their length, so a row costs a few integer reads; nothing else is decoded.

import { COPY_DATA } from './copy-out-socket';
import { compareNumeric } from './numeric-binary';

export type ScannedKind = 'integer' | 'numeric';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER = 19; // signature (11), flags (4), header extension length (4)

/** The big-endian signed 32-bit integer at b[i]. */
const int32 = (b: Buffer, i: number) => (b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3];

type State = 'header' | 'extension' | 'count' | 'length' | 'data' | 'end';

export class CopyBinaryMax {
  /** Something in the stream was not as expected: the caller must ask the database instead. */
  failed = false;
  private state: State = 'header';
  private scratch = Buffer.alloc(HEADER);
  private have = 0;
  private skip = 0;
  private fields = 0;
  private field = 0;
  private capturing = false;
  private width = 0;
  private found = false;
  private hi = 0;
  private lo = 0;
  private best: Buffer | null = null;
  /** The integer `int` read last. */
  private value = 0;
  /** Where the range being scanned ends. */
  private end = 0;

  constructor(
    private readonly column: number,
    private readonly kind: ScannedKind = 'integer',
  ) {}

  /** The greatest value's bytes (its binary form), or null when every value was NULL. */
  max(): Buffer | null {
    if (!this.found) return null;
    if (this.kind === 'numeric') return this.best;
    const out = Buffer.alloc(this.width);
    if (this.width === 8) {
      out.writeInt32BE(this.hi, 0);
      out.writeUInt32BE(this.lo, 4);
    } else out.writeIntBE(this.hi, 0, this.width);
    return out;
  }

  /** Whether the stream reached its trailer. */
  get complete(): boolean {
    return this.state === 'end';
  }

  push(buf: Uint8Array): void {
    const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    this.range(b, 0, b.length);
  }

  /**
   * The same for a chunk of whole CopyData messages as the server framed them
   * (copy-frames-out.ts): each message's body is scanned where it lies, nothing is copied. A
   * chunk that is not whole CopyData messages fails the scan (the caller asks the database).
   * PostgreSQL sends each row as a message of its own, so every message but the first (the file
   * header rides on it) and the trailer goes the short way (`tuples`).
   */
  pushFramed(b: Buffer): void {
    const n = b.length;
    let i = 0;
    while (i < n) {
      if (this.failed || this.state === 'end') return;
      if (n - i < 5 || b[i] !== COPY_DATA) {
        this.failed = true;
        return;
      }
      const end = i + 1 + int32(b, i + 1);
      if (end > n || end < i + 5) {
        this.failed = true;
        return;
      }
      const body = i + 5;
      i = end;
      this.range(b, body, end);
    }
  }

  /** Scans `b` from `start` to `end` (exclusive), going on from where the last range stopped. */
  private range(b: Buffer, start: number, end: number): void {
    if (this.failed || this.state === 'end') return;
    const n = end;
    this.end = end;
    let i = start;
    while (i < n) {
      switch (this.state) {
        case 'header': {
          i = this.gather(b, i, HEADER);
          if (i < 0) return;
          if (!this.scratch.subarray(0, 11).equals(SIGNATURE)) {
            this.failed = true;
            return;
          }
          this.skip = this.scratch.readUInt32BE(15);
          this.state = this.skip > 0 ? 'extension' : 'count';
          break;
        }
        case 'extension': {
          const take = Math.min(this.skip, n - i);
          i += take;
          this.skip -= take;
          if (this.skip === 0) this.state = 'count';
          break;
        }
        case 'count': {
          if (this.have === 0) {
            // Whole tuples inside this chunk go the short way; the first one that runs over the
            // chunk's end (or the trailer) goes through the states below.
            i = this.tuples(b, i);
            if (this.failed || i >= n) return;
          }
          i = this.int(b, i, 2);
          if (i < 0) return;
          const count = this.value;
          if (count === -1) {
            this.state = 'end';
            return;
          }
          if (count <= this.column) {
            this.failed = true;
            return;
          }
          this.fields = count;
          this.field = 0;
          this.state = 'length';
          break;
        }
        case 'length': {
          i = this.int(b, i, 4);
          if (i < 0) return;
          const length = this.value;
          if (length === -1) {
            this.nextField();
            break;
          }
          this.capturing = this.field === this.column;
          if (this.capturing && !this.fits(length)) {
            this.failed = true;
            return;
          }
          this.skip = length;
          this.state = 'data';
          if (this.capturing && this.have === 0 && n - i >= length) {
            this.consider(b, i, length);
            i += length;
            this.skip = 0;
            this.nextField();
          }
          break;
        }
        case 'data': {
          if (this.capturing) {
            // The value runs over the chunk's end: gather it, then compare.
            const width = this.have + this.skip;
            i = this.gather(b, i, width);
            if (i < 0) {
              this.skip = width - this.have;
              return;
            }
            this.consider(this.scratch, 0, width);
          } else {
            const take = Math.min(this.skip, n - i);
            i += take;
            this.skip -= take;
            if (this.skip > 0) return;
          }
          this.skip = 0;
          this.nextField();
          break;
        }
      }
    }
  }

  /** Reads every tuple that lies wholly in `b` from `at`; returns where the first other one starts. */
  private tuples(b: Buffer, at: number): number {
    const n = this.end;
    const column = this.column;
    let i = at;
    while (n - i >= 2) {
      const count = (((b[i] << 8) | b[i + 1]) << 16) >> 16;
      if (count === -1) return i;
      if (count <= column) {
        this.failed = true;
        return i;
      }
      let j = i + 2;
      let valueAt = -1;
      let width = -1;
      for (let f = 0; f < count; f++) {
        if (n - j < 4) return i;
        const length = int32(b, j);
        j += 4;
        if (length === -1) continue;
        if (f === column) {
          valueAt = j;
          width = length;
        }
        j += length;
        if (j > n) return i;
      }
      if (width !== -1) {
        if (!this.fits(width)) {
          this.failed = true;
          return i;
        }
        this.consider(b, valueAt, width);
      }
      i = j;
    }
    return i;
  }

  private nextField() {
    this.capturing = false;
    this.field++;
    this.state = this.field === this.fields ? 'count' : 'length';
  }

  /**
   * Reads a big-endian signed integer of `width` bytes at `i` into `value`, from `b` itself or
   * gathered across chunks; returns where reading stopped, or -1 when `b` ran out first.
   */
  private int(b: Buffer, i: number, width: 2 | 4): number {
    if (this.have === 0 && this.end - i >= width) {
      this.value = b.readIntBE(i, width);
      return i + width;
    }
    const j = this.gather(b, i, width);
    if (j >= 0) this.value = this.scratch.readIntBE(0, width);
    return j;
  }

  /**
   * Copies bytes from `b` at `i` into the scratch buffer until it holds `k`; returns where
   * reading stopped once it does (the scratch then restarts empty), or -1 when `b` ran out first.
   */
  private gather(b: Buffer, i: number, k: number): number {
    if (k > this.scratch.length) {
      const grown = Buffer.alloc(k);
      this.scratch.copy(grown, 0, 0, this.have);
      this.scratch = grown;
    }
    const take = Math.min(k - this.have, this.end - i);
    b.copy(this.scratch, this.have, i, i + take);
    this.have += take;
    if (this.have < k) return -1;
    this.have = 0;
    return i + take;
  }

  /** Whether a value of this many bytes is one this scanner compares. */
  private fits(width: number): boolean {
    if (this.kind === 'integer') return width === 2 || width === 4 || width === 8;
    return width >= 8 && width % 2 === 0;
  }

  private consider(b: Buffer, at: number, width: number) {
    if (this.kind === 'numeric') {
      if (8 + 2 * b.readInt16BE(at) !== width) {
        this.failed = true;
        return;
      }
      // Ties take the later value, as PostgreSQL's numeric max() does (1.5 and 1.50 print apart).
      if (!this.found || compareNumeric(b, at, this.best!, 0) >= 0) {
        this.found = true;
        this.best = Buffer.from(b.subarray(at, at + width));
      }
      return;
    }
    let hi: number;
    let lo = 0;
    if (width === 8) {
      hi = int32(b, at);
      lo = int32(b, at + 4) >>> 0;
    } else hi = width === 4 ? int32(b, at) : (((b[at] << 8) | b[at + 1]) << 16) >> 16;
    if (!this.found || hi > this.hi || (hi === this.hi && lo > this.lo)) {
      this.found = true;
      this.hi = hi;
      this.lo = lo;
      this.width = width;
    }
  }
}
