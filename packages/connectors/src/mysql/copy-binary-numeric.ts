import { refuse } from './copy-binary-plan';

// A MySQL/MariaDB DECIMAL or integer as the server prints it, `[-]digits[.digits]`, written
// as PostgreSQL's binary numeric (copy-binary-rows.ts): base-10000 digits aligned on the
// decimal point, the display scale the count of fraction digits (numeric_in's), leading and
// trailing zero digits left out.

/** 10^(4 - n): scales a fraction group of n digits to four. */
const GROUP_SCALE = [10000, 1000, 100, 10, 1];
/** The most digits a numeric may have here (DECIMAL's are at most 65). */
const MAX_NUMERIC_DIGITS = 248;

/**
 * Writes buf[p, e) at `pos` of `to` with its length word; the new position. One pass over the
 * text, the digits written where they go (the header after).
 */
export function writeNumeric(
  to: DataView,
  pos: number,
  buf: Buffer,
  p: number,
  e: number,
  column: string,
): number {
  const negative = buf[p] === 0x2d;
  if (negative) p++;
  let dot = p;
  while (dot < e && buf[dot] !== 0x2e) dot++;
  let i = p;
  while (i < dot && buf[i] === 0x30) i++;
  const scale = dot < e ? e - dot - 1 : 0;
  if (dot === p && scale === 0) throw refuse(column, 'not a number');
  if (dot - i + scale > MAX_NUMERIC_DIGITS) throw refuse(column, 'too long a number');
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
    if (!(d >= 0 && d <= 9)) throw refuse(column, 'not a number');
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
      if (!(d >= 0 && d <= 9)) throw refuse(column, 'not a number');
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
