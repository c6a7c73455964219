// PostgreSQL's numeric in its binary (COPY / send) form: int16 ndigits, int16 weight, uint16
// sign, int16 dscale, then ndigits base-10000 digits, the first of them at the given weight.
// Compared here without turning the value into text or a JS number.

const NAN = 0xc000;
const PLUS_INFINITY = 0xd000;
const MINUS_INFINITY = 0xf000;
const NEGATIVE = 0x4000;

/** Where a numeric stands: -2 -Infinity, -1 negative, 0 zero, 1 positive, 2 Infinity, 3 NaN. */
function classOf(b: Buffer, at: number): number {
  const sign = b.readUInt16BE(at + 4);
  if (sign === NAN) return 3;
  if (sign === PLUS_INFINITY) return 2;
  if (sign === MINUS_INFINITY) return -2;
  const digits = b.readInt16BE(at);
  let zero = true;
  for (let d = 0; d < digits && zero; d++) zero = b.readInt16BE(at + 8 + 2 * d) === 0;
  if (zero) return 0;
  return sign === NEGATIVE ? -1 : 1;
}

/** The magnitude's digits without leading or trailing zero digits, and the first one's weight. */
function digitsOf(b: Buffer, at: number): { from: number; to: number; weight: number } {
  let from = 0;
  let to = b.readInt16BE(at);
  let weight = b.readInt16BE(at + 2);
  const digit = (d: number) => b.readInt16BE(at + 8 + 2 * d);
  while (from < to && digit(from) === 0) {
    from++;
    weight--;
  }
  while (to > from && digit(to - 1) === 0) to--;
  return { from, to, weight };
}

/** Compares two numerics in binary form: negative, zero or positive, as PostgreSQL orders them. */
export function compareNumeric(a: Buffer, aAt: number, b: Buffer, bAt: number): number {
  const ca = classOf(a, aAt);
  const cb = classOf(b, bAt);
  if (ca !== cb) return ca - cb;
  if (ca !== 1 && ca !== -1) return 0;
  const da = digitsOf(a, aAt);
  const db = digitsOf(b, bAt);
  let order = da.weight - db.weight;
  for (let k = 0; order === 0 && (da.from + k < da.to || db.from + k < db.to); k++) {
    const x = da.from + k < da.to ? a.readInt16BE(aAt + 8 + 2 * (da.from + k)) : 0;
    const y = db.from + k < db.to ? b.readInt16BE(bAt + 8 + 2 * (db.from + k)) : 0;
    order = x - y;
  }
  return ca === 1 ? order : -order;
}
