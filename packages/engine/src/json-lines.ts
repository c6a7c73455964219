// The bytes of one JSON array turned into newline-delimited JSON, the same values one per line,
// without decoding any of them: the array's own brackets become blanks, the commas between its
// elements become newlines and any other line break (JSON allows them only as whitespace
// between tokens) becomes a blank. DuckDB splits such a file on its lines and parses the parts
// in parallel; an array it parses from one end to the other on one thread. DuckDB skips blank
// lines, so an element missing between two commas, or after the last one, is refused here: the
// array would not parse as JSON, and must not load as if it did.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NL = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const COMMA = 0x2c;

export class JsonArrayLines {
  private depth = 0;
  private inString = false;
  private escape = false;
  /** At the array's own level, the next token must begin an element (after `[` or a comma). */
  private expectElement = false;
  private elements = 0;

  constructor(private readonly what = 'the records array') {}

  private invalid(why: string): never {
    throw new Error(`${this.what} is not valid JSON (${why})`);
  }

  /** The next bytes of the array, rewritten; the input is not changed. */
  push(chunk: Uint8Array): Buffer {
    const out = Buffer.from(chunk);
    const n = out.length;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        if (this.escape) {
          this.escape = false;
          i++;
          continue;
        }
        const q = out.indexOf(QUOTE, i);
        if (q === -1) {
          // The string goes on in the next chunk: is its last character an open escape?
          let k = n - 1;
          while (k >= i && out[k] === BACKSLASH) k--;
          this.escape = (n - 1 - k) % 2 === 1;
          return out;
        }
        let k = q - 1;
        while (k >= i && out[k] === BACKSLASH) k--;
        i = q + 1;
        if ((q - 1 - k) % 2 === 0) this.inString = false;
        continue;
      }
      const c = out[i];
      if (this.depth === 1 && c > SPACE && c !== COMMA && c !== 0x5d) {
        this.expectElement = false;
        this.elements++;
      }
      if (c === QUOTE) this.inString = true;
      else if (c === 0x5b || c === 0x7b) {
        if (this.depth === 0) {
          out[i] = SPACE;
          this.expectElement = true;
        }
        this.depth++;
      } else if (c === 0x5d || c === 0x7d) {
        this.depth--;
        if (this.depth === 0) {
          if (this.expectElement && this.elements > 0) this.invalid('a comma after the last element');
          out[i] = NL;
        }
      } else if (c === COMMA) {
        if (this.depth === 1) {
          if (this.expectElement) this.invalid('an element missing before a comma');
          this.expectElement = true;
          out[i] = NL;
        }
      } else if (c === NL || c === CR) out[i] = SPACE;
      i++;
    }
    return out;
  }
}

/** Newline-delimited JSON of the array whose bytes `chunks` are. */
export async function* arrayLines(chunks: AsyncIterable<Uint8Array>, what?: string): AsyncGenerator<Buffer> {
  const lines = new JsonArrayLines(what);
  for await (const chunk of chunks) yield lines.push(chunk);
}
