import pg from 'pg';

/** The driver's own text parser for timestamptz (postgres-date): the reference and the fallback. */
const driverParse = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (
  text: string,
) => Date | number | null;

/** The digits of text[at, at + count) as a number, or -1 when one of them is not a digit. */
function digits(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return -1; // past the end, charCodeAt gives NaN
    n = n * 10 + d;
  }
  return n;
}

const at = (text: string, i: number, ch: number) => text.charCodeAt(i) === ch;
const DASH = 45;
const COLON = 58;
const SPACE = 32;
const DOT = 46;
const PLUS = 43;
const T = 84;

/** The date and time fields readHead read last: year, month, day, hour, minute, second. */
const HEAD = new Int32Array(6);

/**
 * Whether text starts `YYYY-MM-DD?HH:MM:SS` (22 characters at least, `sep` between date and
 * time), its six numbers then in HEAD (one array for every call: no allocation per time).
 */
function readHead(text: string, sep: number): boolean {
  if (
    text.length < 22 ||
    !at(text, 4, DASH) ||
    !at(text, 7, DASH) ||
    !at(text, 10, sep) ||
    !at(text, 13, COLON) ||
    !at(text, 16, COLON)
  ) {
    return false;
  }
  HEAD[0] = digits(text, 0, 4);
  HEAD[1] = digits(text, 5, 2);
  HEAD[2] = digits(text, 8, 2);
  HEAD[3] = digits(text, 11, 2);
  HEAD[4] = digits(text, 14, 2);
  HEAD[5] = digits(text, 17, 2);
  for (let k = 0; k < 6; k++) if (HEAD[k] < 0) return false;
  return true;
}

/**
 * timestamptz text as the driver should read it: the fast path below, or the driver's own parser
 * for anything that is not the common shape.
 */
export function parseTimestamptz(text: string): Date | number | null {
  return readIsoTimestamptz(text) ?? driverParse(text);
}

/**
 * timestamptz text as PostgreSQL writes it with DateStyle ISO (`2026-11-26 06:43:12.123456+00`,
 * `… +05:30`, `… -03:30:15` for a local mean time) into a Date, the same Date the driver's
 * parser makes (fractions past the millisecond are cut off, as there). Read by character
 * position: the driver's regular expressions cost more than the rest of a list page's row
 * parsing. Null for anything else (years before 100 or after 9999, BC, infinity, another
 * DateStyle, malformed text).
 */
export function readIsoTimestamptz(text: string): Date | null {
  const n = text.length;
  if (!readHead(text, SPACE)) return null;
  const year = HEAD[0];
  if (year < 100) return null;
  const month = HEAD[1];
  const day = HEAD[2];
  const hour = HEAD[3];
  const minute = HEAD[4];
  const second = HEAD[5];
  let i = 19;
  let ms = 0;
  if (at(text, i, DOT)) {
    const from = ++i;
    while (i < n && i - from < 6 && digits(text, i, 1) >= 0) i++;
    if (i === from) return null;
    // Milliseconds are the first three digits of the fraction, padded: .1 is 100 ms.
    for (let k = 0; k < 3; k++) ms = ms * 10 + (from + k < i ? text.charCodeAt(from + k) - 48 : 0);
  }
  const sign = at(text, i, PLUS) ? 1 : at(text, i, DASH) ? -1 : 0;
  const hours = digits(text, i + 1, 2);
  if (sign === 0 || hours < 0) return null;
  let offset = hours * 3600;
  i += 3;
  // Then :MM and :SS, each only when there.
  for (let unit = 60; i < n && unit >= 1; unit /= 60) {
    const part = at(text, i, COLON) ? digits(text, i + 1, 2) : -1;
    if (part < 0) return null;
    offset += part * unit;
    i += 3;
  }
  if (i !== n) return null;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - sign * offset * 1000);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

/**
 * timestamptz text as the API writes a time, exactly what `Date#toISOString` gives for the Date
 * the driver would make of it (`2026-11-26T06:43:12.123Z`): cut out of the text itself when it is
 * in UTC, the shape the store writes with its sessions' TimeZone at UTC, which saves a list page
 * a Date and its `toISOString` per time (docs/benchmarks.md, "The list request's CPU"). Reads
 * PostgreSQL's DateStyle ISO text (`2026-11-26 06:43:12.123456+00`) and the JSON form
 * `json_build_object` writes (`2026-11-26T06:43:12.123456+00:00`); any other offset, year or
 * shape goes through a Date as before.
 */
export function isoOfTimestamptz(text: string): string {
  const n = text.length;
  const json = at(text, 10, T);
  if (readHead(text, json ? T : SPACE)) {
    const year = HEAD[0];
    const month = HEAD[1];
    const day = HEAD[2];
    if (
      year >= 100 &&
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= (month === 2 && leap(year) ? 29 : DAYS_IN_MONTH[month - 1]) &&
      HEAD[3] <= 23 &&
      HEAD[4] <= 59 &&
      HEAD[5] <= 59
    ) {
      let i = 19;
      let ms = '000';
      if (at(text, i, DOT)) {
        const from = ++i;
        while (i < n && i - from < 6 && digits(text, i, 1) >= 0) i++;
        const count = i - from;
        ms =
          count >= 3
            ? text.slice(from, from + 3)
            : count === 2
              ? `${text.slice(from, i)}0`
              : `${text[from]}00`;
        if (count === 0) i = -1;
      }
      // UTC only: `+00` (text) or `+00:00` (JSON), and nothing after it.
      const utc =
        i > 0 &&
        at(text, i, PLUS) &&
        at(text, i + 1, 48) &&
        at(text, i + 2, 48) &&
        (json
          ? i + 6 === n && at(text, i + 3, COLON) && at(text, i + 4, 48) && at(text, i + 5, 48)
          : i + 3 === n);
      if (utc) return `${text.slice(0, 10)}T${text.slice(11, 19)}.${ms}Z`;
    }
  }
  const d = text.includes('T') ? new Date(text) : parseTimestamptz(text);
  if (!(d instanceof Date)) throw new RangeError('Invalid time value');
  return d.toISOString();
}
