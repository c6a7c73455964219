import { JsonScanError } from './json-records';

// Cuts the records out of a JSON document as bytes, for a consumer that parses JSON itself
// (DuckDB's read_json): the array at records_path passes through as it arrived, a single value
// there becomes a one-element array, and the cursor value is kept. The same paths as
// JsonRecordScanner, but no record is ever decoded in JavaScript: strings are skipped with
// indexOf and only the structure around the paths is followed. The records themselves are
// checked by whoever parses them; here only the document's structure is.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

type Frame = { array: boolean; index: number; key: string | null; expectKey: boolean };
type Capture = { depth: number; kind: 'whole' | 'cursor'; parts: Buffer[]; from: number };

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isScalarChar = (c: number) =>
  (c >= 0x30 && c <= 0x39) ||
  (c >= 0x61 && c <= 0x7a) ||
  c === 0x2d ||
  c === 0x2b ||
  c === 0x2e ||
  c === 0x45;

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
const NL = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;

/** One JSON value on one line: its line breaks (whitespace between tokens) become blanks. */
function oneLine(value: Buffer): Buffer {
  const out = Buffer.from(value);
  let inString = false;
  for (let i = 0; i < out.length; i++) {
    const c = out[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === NL || c === CR) out[i] = SPACE;
  }
  return out;
}

export class JsonArraySlicer {
  /** The value at records_path was seen. */
  found = false;
  /** Elements of the records array handed out (null elements included, as the scanner does). */
  records = 0;
  /** The value at cursor_path (undefined when the document has none). */
  cursor: unknown = undefined;
  /** Some value arrived (an empty or all-whitespace body has no records and is no error). */
  any = false;

  private readonly frames: Frame[] = [];
  private readonly maxDepth: number;
  private depth = 0;
  private rootDone = false;
  private inString = false;
  private escape = false;
  private inScalar = false;
  private keyParts: Buffer[] | null = null;
  private keyFrom = 0;
  /** Depth of the records array's elements while it passes through; 0 otherwise. */
  private target = 0;
  /** Inside the records array, the next value starts an element. */
  private expectElement = false;
  private emitFrom = 0;
  private captures: Capture[] = [];
  private out: Buffer[] = [];

  /**
   * `lines`: the records come out as newline-delimited JSON instead of as the array's bytes (the
   * array's brackets become blanks, the commas between its elements and its end newlines, any
   * other line break a blank; an element missing between commas or after the last one is
   * refused, as a parser of the array would). The input chunks are rewritten in place.
   */
  constructor(
    private readonly recordsPath: string[],
    private readonly cursorPath: string[] | null,
    private readonly lines = false,
  ) {
    this.maxDepth = Math.max(recordsPath.length, cursorPath?.length ?? 0);
  }

  /** Scans the next bytes; returns the pieces of the records array they hold. */
  push(buf: Buffer): Buffer[] {
    this.scan(buf);
    if (this.target > 0) {
      if (this.emitFrom < buf.length) this.out.push(buf.subarray(this.emitFrom));
      this.emitFrom = 0;
    }
    for (const cap of this.captures) {
      if (cap.from < buf.length) cap.parts.push(buf.subarray(cap.from));
      cap.from = 0;
    }
    if (this.keyParts) {
      this.keyParts.push(buf.subarray(this.keyFrom));
      this.keyFrom = 0;
    }
    const out = this.out;
    this.out = [];
    return out;
  }

  /** Ends the document; returns the last pieces. */
  end(): Buffer[] {
    if (this.inScalar) {
      this.inScalar = false;
      this.valueEnd(Buffer.alloc(0), 0);
    }
    if (!this.any) return [];
    if (this.inString || this.depth > 0 || !this.rootDone)
      throw new JsonScanError('the JSON document ends early');
    const out = this.out;
    this.out = [];
    return out;
  }

  private fail(what: string): never {
    throw new JsonScanError(`the response is not valid JSON (${what})`);
  }

  private scan(buf: Buffer) {
    const n = buf.length;
    let i = 0;
    while (i < n) {
      if (this.target > 0 && !this.inString && !this.inScalar) {
        i = this.passRecords(buf, i);
        continue;
      }
      if (this.inString) {
        if (this.escape) {
          this.escape = false;
          i++;
          continue;
        }
        const q = buf.indexOf(QUOTE, i);
        if (q === -1) {
          let k = n - 1;
          while (k >= i && buf[k] === BACKSLASH) k--;
          this.escape = (n - 1 - k) % 2 === 1;
          return;
        }
        let k = q - 1;
        while (k >= i && buf[k] === BACKSLASH) k--;
        i = q + 1;
        if ((q - 1 - k) % 2 === 1) continue;
        this.inString = false;
        if (this.keyParts) this.endKey(buf, i);
        else this.valueEnd(buf, i);
        continue;
      }
      const c = buf[i];
      if (this.inScalar) {
        if (isScalarChar(c)) {
          i++;
          continue;
        }
        this.inScalar = false;
        this.valueEnd(buf, i);
      }
      if (isSpace(c)) {
        i++;
        continue;
      }
      const top = this.depth > 0 && this.depth <= this.maxDepth ? this.frames[this.depth - 1] : null;
      if (c === QUOTE) {
        if (top && !top.array && top.expectKey) {
          top.expectKey = false;
          this.keyParts = [];
          this.keyFrom = i;
        } else this.valueStart(buf, i);
        this.inString = true;
        i++;
      } else if (c === 0x7b || c === 0x5b) {
        this.valueStart(buf, i);
        this.depth++;
        if (this.depth <= this.maxDepth)
          this.frames[this.depth - 1] = { array: c === 0x5b, index: 0, key: null, expectKey: c === 0x7b };
        i++;
      } else if (c === 0x7d || c === 0x5d) {
        if (this.depth === 0) this.fail('unexpected end of a container');
        this.depth--;
        i++;
        this.valueEnd(buf, i);
      } else if (c === 0x2c) {
        if (top) {
          if (top.array) top.index++;
          else top.expectKey = true;
        }
        i++;
      } else if (c === 0x3a) {
        i++;
      } else if (isScalarChar(c)) {
        this.valueStart(buf, i);
        this.inScalar = true;
        i++;
      } else this.fail('unexpected character');
    }
  }

  /**
   * Inside the records array: only brackets, commas between elements and string ends matter,
   * so this loop skips everything else (strings with indexOf). Returns where it stopped: the
   * end of the chunk, or just past the array's closing bracket.
   */
  private passRecords(buf: Buffer, from: number): number {
    const n = buf.length;
    const target = this.target;
    let d = this.depth;
    let i = from;
    while (i < n) {
      const c = buf[i];
      if (c === QUOTE) {
        if (d === target && this.expectElement) {
          this.records++;
          this.expectElement = false;
        }
        let q = buf.indexOf(QUOTE, i + 1);
        for (;;) {
          if (q === -1) break;
          let k = q - 1;
          while (k > i && buf[k] === BACKSLASH) k--;
          if ((q - 1 - k) % 2 === 0) break;
          q = buf.indexOf(QUOTE, q + 1);
        }
        if (q === -1) {
          // The string goes on in the next chunk; scan() follows it there.
          let k = n - 1;
          while (k > i && buf[k] === BACKSLASH) k--;
          this.escape = (n - 1 - k) % 2 === 1;
          this.inString = true;
          this.depth = d;
          return n;
        }
        i = q + 1;
        continue;
      }
      if (c <= 0x20) {
        if (this.lines && (c === NL || c === CR)) buf[i] = SPACE;
        i++;
        continue;
      }
      if (c === 0x2c) {
        if (d === target) {
          if (this.lines) {
            if (this.expectElement) this.fail('an element missing before a comma');
            buf[i] = NL;
          }
          this.expectElement = true;
        }
        i++;
        continue;
      }
      if (d === target && this.expectElement && c !== 0x5d) {
        this.records++;
        this.expectElement = false;
      }
      if (c === 0x7b || c === 0x5b) d++;
      else if (c === 0x7d || c === 0x5d) {
        d--;
        if (d === target - 1) {
          if (this.lines) {
            if (this.expectElement && this.records > 0) this.fail('a comma after the last element');
            buf[i] = NL;
          }
          this.depth = d;
          this.valueEnd(buf, i + 1);
          return i + 1;
        }
      }
      i++;
    }
    this.depth = d;
    return n;
  }

  private endKey(buf: Buffer, end: number) {
    const parts = this.keyParts!;
    parts.push(buf.subarray(this.keyFrom, end));
    this.keyParts = null;
    try {
      this.frames[this.depth - 1].key = JSON.parse(Buffer.concat(parts).toString('utf8')) as string;
    } catch {
      this.fail('bad key');
    }
  }

  private pathIs(path: string[]): boolean {
    if (path.length !== this.depth) return false;
    for (let k = 0; k < path.length; k++) {
      const f = this.frames[k];
      if ((f.array ? String(f.index) : f.key) !== path[k]) return false;
    }
    return true;
  }

  private valueStart(buf: Buffer, i: number) {
    this.any = true;
    if (this.depth === 0 && this.rootDone) this.fail('more than one value');
    if (this.target > 0) return;
    if (this.depth > this.maxDepth) return;
    if (this.cursorPath && this.pathIs(this.cursorPath))
      this.captures.push({ depth: this.depth, kind: 'cursor', parts: [], from: i });
    if (this.found || !this.pathIs(this.recordsPath)) return;
    this.found = true;
    if (buf[i] === 0x5b) {
      if (this.lines) buf[i] = SPACE;
      this.target = this.depth + 1;
      this.emitFrom = i;
      this.expectElement = true;
    } else this.captures.push({ depth: this.depth, kind: 'whole', parts: [], from: i });
  }

  private valueEnd(buf: Buffer, end: number) {
    if (this.depth === 0) this.rootDone = true;
    if (this.target > 0 && this.depth === this.target - 1) {
      this.out.push(buf.subarray(this.emitFrom, end));
      this.target = 0;
    }
    if (this.captures.length === 0) return;
    const keep: Capture[] = [];
    for (const cap of this.captures) {
      if (cap.depth !== this.depth) {
        keep.push(cap);
        continue;
      }
      cap.parts.push(buf.subarray(cap.from, end));
      const bytes = Buffer.concat(cap.parts);
      if (cap.kind === 'cursor') {
        try {
          this.cursor = JSON.parse(bytes.toString('utf8'));
        } catch {
          this.fail('bad value');
        }
      } else if (bytes.toString('utf8').trim() !== 'null') {
        if (this.lines) this.out.push(oneLine(bytes), Buffer.from([NL]));
        else this.out.push(OPEN, bytes, CLOSE);
        this.records = 1;
      }
    }
    this.captures = keep;
  }
}
