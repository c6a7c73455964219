import type { RowsPayload } from '@sluice/engine';

// When a PostgreSQL sink may take its input's COPY bytes as they are (a PostgreSQL source
// upstream, no transform between): every column the stream carries exists in the target and
// either has the very same built-in type (binary COPY: the fastest, and exact) or both sides
// sit in one family whose text forms read back as the same value (text COPY). Anything else —
// user-defined types (their OIDs differ between databases), dates into text, a timestamptz
// into a timestamp — takes the decoded rows, as before.

/** OIDs from here on belong to objects of one database, not built into PostgreSQL. */
const FIRST_USER_OID = 16384;

/** Type families whose text output the other members read back as the same value. */
const FAMILIES: number[][] = [
  [21, 23, 20, 1700, 700, 701], // smallint, integer, bigint, numeric, real, double precision
  [25, 1043, 1042, 19], // text, varchar, char(n), name
  [114, 3802], // json, jsonb
];
const familyOf = new Map(FAMILIES.flatMap((f, i) => f.map((oid) => [oid, i] as const)));

/** The COPY format to pass the input through in, or null to take its batches. */
export function passThrough(
  rows: RowsPayload,
  names: string[],
  target: Map<string, { oid: number }>,
): 'binary' | 'text' | null {
  const native = rows.native;
  if (native?.format !== 'postgres-copy' || native.types.length !== names.length) return null;
  let binary = true;
  for (const [i, name] of names.entries()) {
    const to = target.get(name)?.oid;
    const from = native.types[i].oid;
    if (to === undefined) return null;
    if (to === from && from < FIRST_USER_OID) continue;
    binary = false;
    const family = familyOf.get(from);
    if (family === undefined || family !== familyOf.get(to)) return null;
  }
  return binary ? 'binary' : 'text';
}
