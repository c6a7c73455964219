// Streams the records of a JSON document without holding the document: the scanner follows
// the structure character by character and hands the text of each record (and of the cursor
// value) to JSON.parse as soon as that value is complete. Only the record being read, the
// cursor and (when the records are the whole body) the body itself are ever kept.

/** Thrown for a document that is not JSON; the message names no content. */
export class JsonScanError extends Error {}

type Frame = {
  array: boolean;
  /** Array: index of the current element. */
  index: number;
  /** Object: the current key, kept only at depths a path can reach. */
  key: string | null;
  state: number;
  /** The array at records_path: each element is a record. */
  target: boolean;
};

// Object states: 0 key or '}', 1 key, 2 ':', 3 value, 4 ',' or '}'.
// Array states: 5 value or ']', 6 value, 7 ',' or ']'.
const O_FIRST = 0;
const O_KEY = 1;
const O_COLON = 2;
const O_VALUE = 3;
const O_NEXT = 4;
const A_FIRST = 5;
const A_VALUE = 6;
const A_NEXT = 7;

type Capture = { depth: number; kind: 'record' | 'whole' | 'cursor'; parts: string[]; from: number };

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const STRING_SPECIAL = /["\\]/g;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isScalarChar = (c: number) =>
  (c >= 0x30 && c <= 0x39) ||
  (c >= 0x61 && c <= 0x7a) ||
  c === 0x2d ||
  c === 0x2b ||
  c === 0x2e ||
  c === 0x45;

/** `data.items` → ['data', 'items']; empty or missing → the document root. */
export function dottedPath(path: string | undefined): string[] {
  if (!path) return [];
  return path.split('.').filter((s) => s.length > 0);
}

export class JsonRecordScanner {
  private readonly stack: Frame[] = [];
  private rootDone = false;
  private mode: 'none' | 'string' | 'scalar' = 'none';
  private escape = false;
  private stringIsKey = false;
  private keyParts: string[] | null = null;
  private keyFrom = 0;
  private scalarParts: string[] = [];
  private scalarFrom = 0;
  private captures: Capture[] = [];
  private out: unknown[] = [];
  private readonly maxDepth: number;
  /** The value at records_path was seen. */
  found = false;
  /** The value at cursor_path (undefined when the document has none). */
  cursor: unknown = undefined;

  constructor(
    private readonly recordsPath: string[],
    private readonly cursorPath: string[] | null,
  ) {
    this.maxDepth = Math.max(recordsPath.length, cursorPath?.length ?? 0);
  }

  /** Scans the next piece of text; returns the records completed in it. */
  push(chunk: string): unknown[] {
    this.scan(chunk);
    return this.drain();
  }

  /** Ends the document; returns the last records. */
  end(): unknown[] {
    if (this.mode === 'scalar') this.endScalar('', 0);
    if (this.mode !== 'none' || this.stack.length > 0 || !this.rootDone) {
      throw new JsonScanError('the JSON document ends early');
    }
    return this.drain();
  }

  private drain(): unknown[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private fail(what: string): never {
    throw new JsonScanError(`the response is not valid JSON (${what})`);
  }

  private scan(chunk: string) {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (this.mode === 'string') {
        if (this.escape) {
          this.escape = false;
          i++;
          continue;
        }
        STRING_SPECIAL.lastIndex = i;
        const m = STRING_SPECIAL.exec(chunk);
        if (!m) {
          i = n;
          break;
        }
        if (chunk.charCodeAt(m.index) === 0x5c) {
          i = m.index + 1;
          this.escape = true;
          continue;
        }
        i = m.index + 1;
        this.endString(chunk, i);
        continue;
      }
      if (this.mode === 'scalar') {
        while (i < n && isScalarChar(chunk.charCodeAt(i))) i++;
        if (i >= n) break;
        this.endScalar(chunk, i);
        continue;
      }
      const c = chunk.charCodeAt(i);
      if (isSpace(c)) {
        i++;
        continue;
      }
      i = this.structural(chunk, i, c);
    }
    this.carry(chunk);
  }

  /** Keeps the unfinished tails of this chunk for the next one. */
  private carry(chunk: string) {
    for (const cap of this.captures) {
      if (cap.from < chunk.length) cap.parts.push(chunk.slice(cap.from));
      cap.from = 0;
    }
    if (this.mode === 'string' && this.keyParts) {
      this.keyParts.push(chunk.slice(this.keyFrom));
      this.keyFrom = 0;
    }
    if (this.mode === 'scalar') {
      this.scalarParts.push(chunk.slice(this.scalarFrom));
      this.scalarFrom = 0;
    }
  }

  private structural(chunk: string, i: number, c: number): number {
    const top = this.stack[this.stack.length - 1];
    const state = top ? top.state : this.rootDone ? -1 : A_VALUE;
    if (state === -1) this.fail('data after the document');
    if (state === O_FIRST || state === O_KEY) {
      if (c === 0x7d && state === O_FIRST) return this.close(chunk, i);
      if (c !== 0x22) this.fail('expected a key');
      this.mode = 'string';
      this.stringIsKey = true;
      this.keyParts = this.stack.length <= this.maxDepth ? [] : null;
      this.keyFrom = i;
      return i + 1;
    }
    if (state === O_COLON) {
      if (c !== 0x3a) this.fail("expected ':'");
      top.state = O_VALUE;
      return i + 1;
    }
    if (state === O_NEXT || state === A_NEXT) {
      if (c === 0x2c) {
        if (top.array) {
          top.index++;
          top.state = A_VALUE;
        } else top.state = O_KEY;
        return i + 1;
      }
      if ((c === 0x7d && !top.array) || (c === 0x5d && top.array)) return this.close(chunk, i);
      this.fail("expected ',' or the end of a container");
    }
    // A value is expected (root, object value, array element).
    if (c === 0x5d && state === A_FIRST) return this.close(chunk, i);
    if (c === 0x7b || c === 0x5b) {
      const array = c === 0x5b;
      const isTarget = this.valueStarts(i, array ? 'array' : 'object');
      this.stack.push({
        array,
        index: 0,
        key: null,
        state: array ? A_FIRST : O_FIRST,
        target: isTarget,
      });
      return i + 1;
    }
    if (c === 0x22) {
      this.valueStarts(i, 'string');
      this.mode = 'string';
      this.stringIsKey = false;
      return i + 1;
    }
    if (isScalarChar(c)) {
      this.valueStarts(i, 'scalar');
      this.mode = 'scalar';
      this.scalarParts = [];
      this.scalarFrom = i;
      return i + 1;
    }
    this.fail('unexpected character');
  }

  private close(chunk: string, i: number): number {
    this.stack.pop();
    this.valueEnds(chunk, i + 1);
    return i + 1;
  }

  private endString(chunk: string, end: number) {
    this.mode = 'none';
    if (!this.stringIsKey) {
      this.valueEnds(chunk, end);
      return;
    }
    const top = this.stack[this.stack.length - 1];
    if (this.keyParts) {
      const text = this.keyParts.join('') + chunk.slice(this.keyFrom, end);
      this.keyParts = null;
      try {
        top.key = JSON.parse(text) as string;
      } catch {
        this.fail('bad key');
      }
    }
    top.state = O_COLON;
  }

  private endScalar(chunk: string, end: number) {
    const text = this.scalarParts.join('') + chunk.slice(this.scalarFrom, end);
    this.scalarParts = [];
    if (text !== 'true' && text !== 'false' && text !== 'null' && !NUMBER.test(text))
      this.fail('bad literal');
    this.mode = 'none';
    this.valueEnds(chunk, end);
  }

  /** Starts the captures a value at this position needs; true when it is the records array. */
  private valueStarts(i: number, kind: 'array' | 'object' | 'string' | 'scalar'): boolean {
    const depth = this.stack.length;
    const top = this.stack[depth - 1];
    if (top?.target) this.captures.push({ depth, kind: 'record', parts: [], from: i });
    if (depth > this.maxDepth) return false;
    const path = this.stack.map((f) => (f.array ? String(f.index) : (f.key ?? '')));
    if (this.cursorPath && same(path, this.cursorPath)) {
      this.captures.push({ depth, kind: 'cursor', parts: [], from: i });
    }
    if (!same(path, this.recordsPath)) return false;
    this.found = true;
    if (kind === 'array') return true;
    this.captures.push({ depth, kind: 'whole', parts: [], from: i });
    return false;
  }

  private valueEnds(chunk: string, end: number) {
    const depth = this.stack.length;
    if (this.captures.length > 0 && this.captures[this.captures.length - 1].depth === depth) {
      const keep: Capture[] = [];
      for (const cap of this.captures) {
        if (cap.depth !== depth) {
          keep.push(cap);
          continue;
        }
        const text = cap.parts.join('') + chunk.slice(cap.from, end);
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          this.fail('bad value');
        }
        if (cap.kind === 'cursor') this.cursor = value;
        else if (cap.kind === 'record' || value !== null) this.out.push(value);
      }
      this.captures = keep;
    }
    const top = this.stack[depth - 1];
    if (!top) this.rootDone = true;
    else top.state = top.array ? A_NEXT : O_NEXT;
  }
}

function same(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export type ScanOptions = {
  /** Records per yielded batch (default 1,000). */
  batch?: number;
  /**
   * The bytes may stop mid-document (a sample): keep the complete records, never fail on the
   * cut, and skip the scanner's end checks.
   */
  partial?: boolean;
  /** Set once any text other than whitespace arrived (an empty body has no records). */
  seen?: { any: boolean };
};

/**
 * The records a scanner finds in a byte stream, in batches, decoded as UTF-8 across chunk
 * boundaries. Throws JsonScanError where the text is not JSON; callers say what that means.
 */
export async function* scanRecords(
  body: AsyncIterable<Uint8Array>,
  scanner: JsonRecordScanner,
  opts: ScanOptions = {},
): AsyncGenerator<unknown[]> {
  const size = opts.batch ?? 1000;
  const seen = opts.seen ?? { any: false };
  const decoder = new TextDecoder();
  const batch: unknown[] = [];
  const add = (text: string) => {
    if (!seen.any && text.trim() === '') return;
    seen.any = true;
    for (const r of scanner.push(text)) batch.push(r);
  };
  try {
    for await (const chunk of body) {
      add(decoder.decode(chunk, { stream: true }));
      while (batch.length >= size) yield batch.splice(0, size);
    }
    add(decoder.decode());
    if (seen.any && !opts.partial) for (const r of scanner.end()) batch.push(r);
  } catch (err) {
    if (!(err instanceof JsonScanError && opts.partial)) throw err;
  }
  while (batch.length > 0) yield batch.splice(0, size);
}
