import type { Field } from './operations';

// MySQL/MariaDB text-protocol rows written as PostgreSQL COPY text, byte for byte, without a
// JavaScript value in between. A text-protocol row packet is one length-encoded string per
// column (0xFB for NULL), each the value as the server prints it; COPY text wants the same
// text, tab-separated, with backslash, tab, newline and carriage return escaped and NULL as \N.
// What the row path (mysql2's values through the CSV encoder) lands is what lands here: numbers
// and dates are the server's text either way (dateStrings, bigNumberStrings), strings are
// UTF-8, and binary strings and BIT go in as bytea hex. Columns whose row-path value is not
// their text (JSON is parsed and re-serialised, geometry and vectors are decoded, NULL-typed
// columns) are not taken here: `copyTextKinds` says why and the source keeps the row path.

/** ASCII the server prints (numbers, dates, times): copied as is. */
export const PLAIN = 0;
/** UTF-8 text: COPY's specials escaped. */
export const TEXT = 1;
/** Bytes (binary strings, BIT): bytea hex, `\\x…` once COPY's own escape is applied. */
export const BYTES = 2;
export type ColumnKind = typeof PLAIN | typeof TEXT | typeof BYTES;

const BINARY_CHARSET = 63;
const PLAIN_TYPES = new Set([0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 246]);
const STRING_TYPES = new Set([15, 247, 248, 249, 250, 251, 252, 253, 254]);

/** How each column goes into COPY text, or why the rows cannot go that way. */
export function copyTextKinds(fields: Field[]): { kinds: ColumnKind[] } | { reason: string } {
  const kinds: ColumnKind[] = [];
  for (const f of fields) {
    const why = `column ${f.name}`;
    if (f.extendedFormat === 'json' || f.columnType === 245) return { reason: `${why} is JSON` };
    if (
      f.columnType === 255 ||
      f.extendedTypeName === 'geometry' ||
      /^(point|linestring|polygon|multi|geometry)/i.test(f.extendedTypeName ?? '')
    )
      return { reason: `${why} is a geometry` };
    if (PLAIN_TYPES.has(f.columnType)) kinds.push(PLAIN);
    else if (f.columnType === 16) kinds.push(BYTES);
    else if (STRING_TYPES.has(f.columnType)) {
      if (f.characterSet === BINARY_CHARSET) kinds.push(BYTES);
      else if (f.encoding === 'utf8') kinds.push(TEXT);
      else return { reason: `${why} arrives in ${f.encoding ?? 'an unknown encoding'}, not UTF-8` };
    } else return { reason: `${why} has type ${f.columnType === 6 ? 'NULL' : `code ${f.columnType}`}` };
  }
  return { kinds };
}

const HEX = new Uint8Array(512);
for (let i = 0; i < 256; i++) {
  const h = i.toString(16).padStart(2, '0');
  HEX[2 * i] = h.charCodeAt(0);
  HEX[2 * i + 1] = h.charCodeAt(1);
}

/** Writes buf[p, end) into out at pos as `kind`; returns the new position. */
function put(out: Buffer, pos: number, buf: Buffer, p: number, end: number, kind: ColumnKind): number {
  if (kind === TEXT) {
    for (; p < end; p++) {
      const b = buf[p];
      if (b === 0x5c) {
        out[pos++] = 0x5c;
        out[pos++] = 0x5c;
      } else if (b < 0x0e && (b === 0x09 || b === 0x0a || b === 0x0d)) {
        out[pos++] = 0x5c;
        out[pos++] = b === 0x09 ? 0x74 : b === 0x0a ? 0x6e : 0x72;
      } else out[pos++] = b;
    }
  } else if (kind === PLAIN) {
    if (end - p > 32) return pos + buf.copy(out, pos, p, end);
    for (; p < end; p++) out[pos++] = buf[p];
  } else {
    out[pos++] = 0x5c;
    out[pos++] = 0x5c;
    out[pos++] = 0x78;
    for (; p < end; p++) {
      const b = buf[p];
      out[pos++] = HEX[2 * b];
      out[pos++] = HEX[2 * b + 1];
    }
  }
  return pos;
}

/**
 * Rows in, COPY text chunks out (`onChunk`, about `chunkSize` bytes each). `packet` takes a
 * text-protocol row straight from the wire; `values` takes the same row as mysql2 parsed it
 * (the fallback when the raw packets are out of reach). `cursor` sees one column's value of
 * every row as the row path would (text, bytes for a binary column).
 */
export class CopyTextRows {
  rows = 0;
  private out: Buffer;
  private pos = 0;

  constructor(
    private readonly kinds: ColumnKind[],
    private readonly onChunk: (chunk: Buffer) => void,
    private readonly chunkSize = 128 * 1024,
    private readonly cursor: { index: number; see(value: string | Buffer | null): void } | null = null,
  ) {
    this.out = Buffer.allocUnsafe(chunkSize);
  }

  /** Room for `n` more bytes: the full chunk goes out first. */
  private room(n: number) {
    if (this.pos + n <= this.out.length) return;
    this.flush();
    if (n > this.out.length) this.out = Buffer.allocUnsafe(n);
  }

  /** One row packet's payload, buf[start, end): length-encoded values, one per column. */
  packet(buf: Buffer, start: number, end: number): void {
    const kinds = this.kinds;
    const width = kinds.length;
    // Each value grows at most to twice its bytes plus 3 (hex), NULL's one byte to two.
    this.room(2 * (end - start) + 3 * width + 1);
    const out = this.out;
    const cursor = this.cursor;
    let pos = this.pos;
    let p = start;
    // One pass: each value's bytes go straight into the chunk, escaped as they are copied.
    for (let c = 0; c < width; c++) {
      if (c > 0) out[pos++] = 0x09;
      let len = buf[p++];
      if (len >= 0xfb) {
        if (len === 0xfb) {
          out[pos++] = 0x5c;
          out[pos++] = 0x4e;
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
      const kind = kinds[c];
      if (cursor !== null && cursor.index === c) cursor.see(this.cursorValue(buf, p, e, kind));
      if (kind === PLAIN) {
        for (; p < e; p++) out[pos++] = buf[p];
      } else if (kind === TEXT) {
        for (; p < e; p++) {
          const b = buf[p];
          if (b === 0x5c) {
            out[pos++] = 0x5c;
            out[pos++] = 0x5c;
          } else if (b < 0x0e && (b === 0x09 || b === 0x0a || b === 0x0d)) {
            out[pos++] = 0x5c;
            out[pos++] = b === 0x09 ? 0x74 : b === 0x0a ? 0x6e : 0x72;
          } else out[pos++] = b;
        }
      } else {
        pos = put(out, pos, buf, p, e, kind);
        p = e;
      }
    }
    if (p !== end) throw new Error('a row packet holds more than its columns');
    out[pos++] = 0x0a;
    this.pos = pos;
    this.rows++;
    if (pos >= this.chunkSize) this.flush();
  }

  /** One row as mysql2 parsed it (text protocol, dateStrings, bigNumberStrings). */
  values(row: unknown[]): void {
    const kinds = this.kinds;
    for (let c = 0; c < kinds.length; c++) {
      const v = row[c];
      const bytes =
        v === null || v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(String(v), 'utf8');
      if (this.cursor?.index === c)
        this.cursor.see(bytes === null ? null : this.cursorValue(bytes, 0, bytes.length, kinds[c]));
      this.room(bytes === null ? 3 : 2 * bytes.length + 4);
      if (c > 0) this.out[this.pos++] = 0x09;
      if (bytes === null) {
        this.out[this.pos++] = 0x5c;
        this.out[this.pos++] = 0x4e;
      } else this.pos = put(this.out, this.pos, bytes, 0, bytes.length, kinds[c]);
    }
    this.room(1);
    this.out[this.pos++] = 0x0a;
    this.rows++;
    if (this.pos >= this.chunkSize) this.flush();
  }

  private cursorValue(buf: Buffer, p: number, end: number, kind: ColumnKind): string | Buffer {
    return kind === BYTES ? Buffer.from(buf.subarray(p, end)) : buf.toString('utf8', p, end);
  }

  /** The end of the rows: the last chunk. */
  finish(): void {
    this.flush();
  }

  /** Hands out what is written so far. */
  flush(): void {
    if (this.pos === 0) return;
    const chunk = this.out.subarray(0, this.pos);
    this.out = Buffer.allocUnsafe(this.chunkSize);
    this.pos = 0;
    this.onChunk(chunk);
  }
}
