// Timestamp text with a UTC offset, as one instant in UTC without a zone. MySQL's DATETIME and
// TIMESTAMP hold no zone and a strict server refuses an offset ("2026-01-02 03:04:05.123+00",
// error 1292), so the MySQL sink stores the instant in UTC (its session runs with time_zone
// '+00:00', so TIMESTAMP columns agree); SQL source cursors compare timestamps by it.
// Microseconds are kept; text without an offset, and anything that is not a timestamp, passes
// unchanged.

const ZONED =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)$/;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function offsetMinutes(zone: string): number {
  if (zone === 'Z' || zone === 'z') return 0;
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || 0));
}

/** `2026-01-02T03:04:05.123456+02:00` → `2026-01-02 01:04:05.123456`; other values as given. */
export function utcDatetime(value: string): string {
  const m = ZONED.exec(value);
  if (!m) return value;
  const [, y, mo, d, h, mi, s = '00', frac = '', zone] = m;
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  // Out-of-range parts (month 13, hour 99) would roll over: leave those for the server to refuse.
  const back = new Date(local);
  if (
    back.getUTCMonth() + 1 !== Number(mo) ||
    back.getUTCDate() !== Number(d) ||
    back.getUTCHours() !== Number(h)
  )
    return value;
  if (Number(mi) > 59 || Number(s) > 59) return value;
  const t = new Date(local - offsetMinutes(zone) * 60_000);
  const micros = frac ? `.${frac.slice(0, 6).padEnd(6, '0')}` : '';
  return `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}${micros}`;
}

export const isTemporalColumn = (dataType: string) => /^(datetime|timestamp)$/i.test(dataType);
