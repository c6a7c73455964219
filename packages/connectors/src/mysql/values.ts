// Values as the MySQL sink binds them (docs/pipeline-spec.md, "MySQL sink").

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** A value as mysql2 binds it: JSON as text, dates as UTC DATETIME text (never the host's zone). */
export function bindable(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) return null;
    return `${v.getUTCFullYear()}-${pad(v.getUTCMonth() + 1)}-${pad(v.getUTCDate())} ${pad(v.getUTCHours())}:${pad(v.getUTCMinutes())}:${pad(v.getUTCSeconds())}.${pad(v.getUTCMilliseconds(), 3)}`;
  }
  if (Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v);
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
}

/** About the bytes a bound value takes in the statement packet. */
export const sizeOf = (v: unknown) =>
  v === null ? 1 : typeof v === 'string' ? Buffer.byteLength(v) + 9 : Buffer.isBuffer(v) ? v.length + 9 : 9;
