import type { LogLevel } from '@sluice/engine';
import type { Pgoutput } from 'pg-logical-replication';
import { pgTypes } from '../connect';
import type { CapturedTable, RowShape } from './catalog';

// pgoutput messages (parsed by pg-logical-replication) to the rows of the changes
// contract (connectors/src/types.ts ChangesCapability). Values are parsed as the PostgreSQL
// source parses them (connect.ts pgTypes: int8 and numeric as text, dates and times as the
// server prints them, json parsed, bytea as bytes), so a change and a snapshot row of the same
// data are equal.

export const MARKER_PREFIX = 'sluice_cdc';

/** Microseconds since 1970 (pgoutput's commit time) as ISO 8601 UTC with microseconds. */
export function isoMicros(us: bigint): string {
  const ms = us / 1000n;
  const iso = new Date(Number(ms)).toISOString();
  return `${iso.slice(0, 23)}${String(Number(us - ms * 1000n)).padStart(3, '0')}Z`;
}

export type Decoded =
  | { kind: 'begin' }
  | { kind: 'rows'; rows: unknown[][] }
  | { kind: 'commit'; endLsn: string }
  | { kind: 'marker'; content: string }
  /** A table described with a shape other than the catalog's at the start of the run. */
  | { kind: 'shape'; table: CapturedTable }
  | { kind: 'other' };

export class ChangeDecoder {
  private readonly byOid = new Map<number, CapturedTable>();
  private readonly byName = new Map<string, CapturedTable>();
  private committedAt: string | null = null;
  /** Per relation oid: the table's current columns the relation does not have. */
  private readonly missing = new Map<number, string[]>();
  /** Per relation oid: its table, and each of its columns still in the table with its place in a row. */
  private readonly places = new Map<number, { table: CapturedTable; columns: [string, number][] }>();

  constructor(
    tables: CapturedTable[],
    private readonly shape: RowShape,
    private readonly log: (level: LogLevel, message: string) => void,
  ) {
    for (const t of tables) {
      if (t.oid !== null) this.byOid.set(t.oid, t);
      this.byName.set(`${t.schema}.${t.table}`, t);
    }
  }

  /**
   * One message as the library's parser made it. A Relation message must reach this before
   * the parser reads the next one: its columns' value parsers are set here.
   */
  decode(lsn: string, msg: Pgoutput.Message): Decoded {
    switch (msg.tag) {
      case 'begin':
        this.committedAt = isoMicros(msg.commitTime as bigint);
        return { kind: 'begin' };
      case 'commit':
        return { kind: 'commit', endLsn: msg.commitEndLsn ?? lsn };
      case 'relation': {
        const t = this.relation(msg);
        return t ? { kind: 'shape', table: t } : { kind: 'other' };
      }
      case 'message':
        return msg.prefix === MARKER_PREFIX
          ? { kind: 'marker', content: Buffer.from(msg.content).toString('utf8') }
          : { kind: 'other' };
      case 'insert':
      case 'update':
      case 'delete': {
        const row = this.row(msg, lsn);
        return row ? { kind: 'rows', rows: [row] } : { kind: 'other' };
      }
      case 'truncate': {
        const rows = this.truncated(msg, lsn);
        return rows.length > 0 ? { kind: 'rows', rows } : { kind: 'other' };
      }
      default:
        return { kind: 'other' };
    }
  }

  private tableOf(rel: Pgoutput.MessageRelation): CapturedTable | undefined {
    return this.byOid.get(rel.relationOid) ?? this.byName.get(`${rel.schema}.${rel.name}`);
  }

  /**
   * A Relation message comes before the first change of a table in a decoding session and
   * after each change of its shape: values are parsed as our sessions parse them, and a shape
   * other than the catalog's at the start of the run is logged and answered (the read then asks
   * the catalog whether it changed during the run; docs/cdc.md "Schema changes").
   */
  private relation(rel: Pgoutput.MessageRelation): CapturedTable | null {
    for (const c of rel.columns) c.parser = pgTypes.getTypeParser(c.typeOid) as (raw: any) => any;
    const t = this.tableOf(rel);
    if (!t) return null;
    const now = new Map(t.columns.map((c) => [c.name, c.oid]));
    const then = new Map(rel.columns.map((c) => [c.name, c.typeOid]));
    const added = t.columns.filter((c) => !then.has(c.name)).map((c) => c.name);
    const removed = rel.columns.filter((c) => !now.has(c.name)).map((c) => c.name);
    const retyped = rel.columns
      .filter((c) => now.has(c.name) && now.get(c.name) !== c.typeOid)
      .map((c) => c.name);
    this.missing.set(rel.relationOid, added);
    const index = this.shape.index.get(t.name)!;
    this.places.set(rel.relationOid, {
      table: t,
      columns: rel.columns.filter((c) => index.has(c.name)).map((c) => [c.name, index.get(c.name)!]),
    });
    if (added.length + removed.length + retyped.length > 0) {
      const parts = [
        added.length ? `added since: ${added.join(', ')}` : '',
        removed.length ? `dropped since (their values are not handed on): ${removed.join(', ')}` : '',
        retyped.length ? `retyped since: ${retyped.join(', ')}` : '',
      ].filter(Boolean);
      this.log('warn', `table ${t.name} changed shape in the change stream; columns ${parts.join('; ')}`);
      return t;
    }
    return null;
  }

  /**
   * A TRUNCATE (docs/cdc.md "The rows"): one `truncate` row per captured table it names (one
   * statement may name several, or reach them by CASCADE), every other column null.
   */
  private truncated(msg: Pgoutput.MessageTruncate, lsn: string): unknown[][] {
    const out: unknown[][] = [];
    for (const rel of msg.relations) {
      const t = this.tableOf(rel);
      if (!t) continue;
      const row: unknown[] = new Array(this.shape.columns.length).fill(null);
      row[0] = 'truncate';
      row[1] = t.name;
      row[2] = lsn;
      row[3] = this.committedAt;
      out.push(row);
    }
    return out;
  }

  private row(
    msg: Pgoutput.MessageInsert | Pgoutput.MessageUpdate | Pgoutput.MessageDelete,
    lsn: string,
  ): unknown[] | null {
    const place = this.places.get(msg.relation.relationOid);
    if (!place) return null;
    const row: unknown[] = new Array(this.shape.columns.length).fill(null);
    row[0] = msg.tag;
    row[1] = place.table.name;
    row[2] = lsn;
    row[3] = this.committedAt;
    const tuple = msg.tag === 'delete' ? (msg.old ?? msg.key ?? {}) : msg.new;
    let unchanged: string[] | null = null;
    for (const [name, i] of place.columns) {
      if (!(name in tuple)) continue;
      const v = tuple[name];
      // The parser leaves an unchanged TOAST value undefined (with REPLICA IDENTITY FULL it
      // takes it from the old row): never hand it on as null.
      if (v === undefined) {
        if (msg.tag !== 'delete') {
          unchanged ??= [];
          unchanged.push(name);
        }
        continue;
      }
      row[i] = v;
    }
    if (msg.tag !== 'delete') {
      const absent = this.missing.get(msg.relation.relationOid);
      if (absent && absent.length > 0) unchanged = [...(unchanged ?? []), ...absent];
    }
    row[4] = unchanged;
    return row;
  }
}
