import type { Column, RowsPayload } from '@sluice/engine';
import { ConnectorError } from '../types';

// The `apply` sink mode (docs/pipeline-spec.md, "how sinks write"): change rows — the metadata
// columns `_op`, `_table`, `_position`, `_committed_at`, `_unchanged`, then the table's
// columns, as a cdc source hands them on — compacted to each key's final state in row (source)
// order before the PostgreSQL and MySQL sinks write them: a key's last change decides between
// an upsert and a delete, and columns a change did not carry (`_unchanged`) keep the value an
// earlier change of the batch gave them, else the target's. A `truncate` empties the target
// before the changes that follow it in the batch, and voids the ones before it.

/** The metadata columns of a change row, in the order a CDC source hands them on. */
export const CHANGE_COLUMNS = ['_op', '_table', '_position', '_committed_at', '_unchanged'];
/** Metadata columns an apply sink still writes when the target table has a column of that name. */
export const KEPT_CHANGE_COLUMNS = ['_position', '_committed_at'];

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

/** The input's columns without the change metadata: what the target table holds. */
export function dataColumns(columns: Column[]): Column[] {
  return columns.filter((c) => !CHANGE_COLUMNS.includes(c.name));
}

/** The input columns an apply sink writes: the table's, and kept metadata the target `has`. */
export function appliedNames(names: string[], has: (name: string) => boolean): string[] {
  return names.filter((n) => !CHANGE_COLUMNS.includes(n) || (KEPT_CHANGE_COLUMNS.includes(n) && has(n)));
}

export type ChangeSet = {
  /** Final rows of keys whose last change is an insert or update, values in `names` order. */
  upserts: unknown[][];
  /**
   * Per upsert: the columns no change of the batch carried (the target keeps them), sorted, or
   * null.
   */
  unchanged: (string[] | null)[];
  /** Final rows of keys whose last change is a delete (the key columns are what counts). */
  deletes: unknown[][];
  /** Change rows read. */
  changes: number;
  /** A truncate came: the target is emptied before the upserts (the changes before it are void). */
  truncate: boolean;
};

type State = { del: boolean; values: unknown[]; missing: Set<string> | null };

/** A one-column key as a Map key: numbers and strings as they are (no string built per row). */
function singleKey(v: unknown): unknown {
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER))
    return Number(v);
  return `\u0001${keyPart(v)}`;
}

/** A key's identity in the batch: numbers and bigints alike, bytes as hex, dates as instants. */
function keyPart(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return `s${v}`;
    case 'number':
    case 'bigint':
      return `n${v}`;
    case 'boolean':
      return `b${v}`;
    default:
      break;
  }
  if (v instanceof Date) return `d${v.getTime()}`;
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return `x${Buffer.from(v).toString('hex')}`;
  return `j${JSON.stringify(v)}`;
}

function unchangedOf(v: unknown, row: number): string[] | null {
  if (v === null || v === undefined) return null;
  let list: unknown = v;
  if (typeof v === 'string') {
    try {
      list = JSON.parse(v);
    } catch {
      list = undefined;
    }
  }
  if (list === null) return null;
  if (!Array.isArray(list) || list.some((c) => typeof c !== 'string'))
    throw invalid(`change row ${row}: _unchanged must be null or a JSON array of column names`);
  return list.length > 0 ? (list as string[]) : null;
}

/**
 * Reads every change row of `rows` and compacts them by `key`, writing the columns `names`
 * (each a column of the input). Refuses input without `_op`, an unknown `_op`, a null key and
 * changes of more than one `_table` (one apply sink writes one table).
 */
export async function compactChanges(rows: RowsPayload, key: string[], names: string[]): Promise<ChangeSet> {
  const at = new Map(rows.columns.map((c, i) => [c.name, i]));
  const opAt = at.get('_op');
  if (opAt === undefined && rows.columns.length === 0) {
    // An empty payload (no columns): nothing to apply.
    for await (const _ of rows.batches);
    return { upserts: [], unchanged: [], deletes: [], changes: 0, truncate: false };
  }
  if (opAt === undefined) {
    throw invalid(
      `mode apply takes change rows with an _op column (insert, update, delete or truncate), as a cdc source hands them on; the input has ${rows.columns.map((c) => c.name).join(', ') || 'no columns'}`,
    );
  }
  const tableAt = at.get('_table');
  const unchangedAt = at.get('_unchanged');
  const pick = names.map((n) => at.get(n) as number);
  const keyAt = key.map((k) => names.indexOf(k));
  const keySet = new Set(key);
  const position = new Map(names.map((n, i) => [n, i]));
  // `_unchanged` values repeat (the same large columns): parsed once each.
  const parsed = new Map<unknown, Set<string> | null>();
  const unchangedSet = (v: unknown, row: number): Set<string> | null => {
    if (v === null || v === undefined) return null;
    let found = typeof v === 'string' ? parsed.get(v) : undefined;
    if (found === undefined) {
      const list = unchangedOf(v, row);
      const kept = list ? list.filter((c) => !keySet.has(c) && position.has(c)) : [];
      found = kept.length > 0 ? new Set(kept) : null;
      if (typeof v === 'string') parsed.set(v, found);
    }
    return found;
  };
  const states = new Map<unknown, State>();
  const single = key.length === 1;
  let changes = 0;
  let truncate = false;
  let table: unknown;
  for await (const batch of rows.batches) {
    for (const row of batch) {
      changes++;
      if (tableAt !== undefined) {
        const t = row[tableAt];
        if (changes === 1) table = t;
        else if (t !== table)
          throw invalid(
            `mode apply writes one table, but the changes come from ${JSON.stringify(table)} and ${JSON.stringify(t)}: filter them with a transform (WHERE _table = '…') before each apply sink`,
          );
      }
      const op = row[opAt];
      if (op === 'truncate') {
        // The table is emptied here: what came before no longer matters, and the target's
        // values are gone (nothing to keep for a later change without some columns).
        states.clear();
        truncate = true;
        continue;
      }
      const values = new Array(pick.length);
      for (let j = 0; j < pick.length; j++) values[j] = row[pick[j]];
      let id: unknown = '';
      for (let j = 0; j < keyAt.length; j++) {
        const v = values[keyAt[j]];
        if (v === null || v === undefined)
          throw invalid(`change row ${changes}: key column ${key[j]} is null`);
        id = single ? singleKey(v) : j === 0 ? keyPart(v) : `${id}\u0000${keyPart(v)}`;
      }
      if (op === 'delete') {
        states.set(id, { del: true, values, missing: null });
        continue;
      }
      if (op !== 'insert' && op !== 'update')
        throw invalid(
          `change row ${changes}: _op is ${JSON.stringify(op)}; apply takes insert, update, delete or truncate`,
        );
      const unchanged = unchangedAt === undefined ? null : unchangedSet(row[unchangedAt], changes);
      const prior = states.get(id);
      if (!unchanged) {
        states.set(id, { del: false, values, missing: null });
      } else if (!prior || prior.del) {
        // Nothing earlier in the batch: the target keeps its values. After a delete or a
        // truncate in the batch there is no value to keep: those columns are null.
        const gone = prior?.del === true || truncate;
        if (gone) for (const c of unchanged) values[position.get(c) as number] = null;
        states.set(id, { del: false, values, missing: gone ? null : unchanged });
      } else {
        // Merge with the earlier change of this key, which may have carried the columns.
        const missing = new Set<string>();
        for (const c of unchanged) {
          const i = position.get(c) as number;
          values[i] = prior.values[i];
          if (prior.missing?.has(c)) missing.add(c);
        }
        states.set(id, { del: false, values, missing: missing.size > 0 ? missing : null });
      }
    }
  }
  const out: ChangeSet = { upserts: [], unchanged: [], deletes: [], changes, truncate };
  const sorted = new Map<Set<string>, string[]>();
  for (const s of states.values()) {
    if (s.del) {
      out.deletes.push(s.values);
      continue;
    }
    out.upserts.push(s.values);
    let names: string[] | null = null;
    if (s.missing) {
      names = sorted.get(s.missing) ?? [...s.missing].sort();
      sorted.set(s.missing, names);
    }
    out.unchanged.push(names);
  }
  return out;
}

/**
 * Sorts rows in place by their key columns (at `keyAt`) when every key value is a number or
 * every one a string: written in the index's order, a batch touches far fewer pages. Rows with
 * other key types keep their order (the write is correct either way).
 */
export function inKeyOrder(rows: unknown[][], keyAt: number[]): void {
  for (const i of keyAt) {
    const kind = typeof rows[0]?.[i];
    if ((kind !== 'number' && kind !== 'string') || rows.some((r) => typeof r[i] !== kind)) return;
  }
  rows.sort((a, b) => {
    for (const i of keyAt) {
      const x = a[i] as number | string;
      const y = b[i] as number | string;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  });
}
