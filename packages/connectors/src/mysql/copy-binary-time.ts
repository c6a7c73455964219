import { refuse } from './copy-binary-plan';

// MySQL/MariaDB dates and datetimes as the server prints them, `YYYY-MM-DD[ HH:MM:SS[.f…]]`,
// written as PostgreSQL's binary date and timestamp (copy-binary-rows.ts): the days or
// microseconds since 2000-01-01 that date_in and timestamp_in would make of the same text, and
// refused where they refuse it (a zero or partial date).

/** Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01. */
export const PG_EPOCH_DAYS = 10957;
const TWO_32 = 4294967296;
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** 10^(6 - n): scales n fraction digits of a second to microseconds. */
const MICRO_SCALE = [1000000, 100000, 10000, 1000, 100, 10, 1];

/** Days since 1970-01-01 of a proleptic Gregorian date (the usual era-based civil calendar). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

/** Two ASCII digits at buf[p] as a number, or -1. */
function two(buf: Buffer, p: number): number {
  const a = buf[p] - 0x30;
  const b = buf[p + 1] - 0x30;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** One encoder's dates: the last one read is remembered (a column's dates often repeat). */
export class BinaryDates {
  /** The last date read (y·10⁴ + m·10² + d, of a valid date) and its days since 1970-01-01. */
  private lastDate = -1;
  private lastDays = 0;

  /** `YYYY-MM-DD` at buf[p] as days since 1970-01-01; refused where PostgreSQL's input refuses. */
  days(buf: Buffer, p: number, column: string): number {
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
      throw refuse(column, 'not a date PostgreSQL accepts (a zero or partial date)');
    this.lastDate = key;
    this.lastDays = daysFromCivil(y, m, d);
    return this.lastDays;
  }

  /**
   * `YYYY-MM-DD[ HH:MM:SS[.f…]]` at buf[p, e) as microseconds since 2000-01-01, written at `pos`
   * with its length word; the new position.
   */
  timestamp(
    out: Buffer,
    to: DataView,
    pos: number,
    buf: Buffer,
    p: number,
    e: number,
    column: string,
  ): number {
    const len = e - p;
    if (len < 10) throw refuse(column, 'not a timestamp');
    let seconds = (this.days(buf, p, column) - PG_EPOCH_DAYS) * 86400;
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
        throw refuse(column, 'not a timestamp');
      seconds += h * 3600 + mi * 60 + s;
      for (let q = p + 20; q < e; q++) {
        const d = buf[q] - 0x30;
        if (!(d >= 0 && d <= 9)) throw refuse(column, 'not a timestamp');
        micros = micros * 10 + d;
      }
      if (len > 20) micros *= MICRO_SCALE[len - 20];
    }
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
}
