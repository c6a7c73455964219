import type { Column } from '@sluice/engine';
import type pg from 'pg';
import { parseTableName, quoteIdent } from '../../relational/identifiers';

// What the catalog says about the captured tables now: their columns (with exact type names),
// the key a delete or update names them by, and the replica identity (docs/cdc.md "Limits").

export type CapturedTable = {
  /** As the operation names it. */
  name: string;
  schema: string;
  table: string;
  /** `"schema"."table"` */
  sql: string;
  oid: number | null;
  columns: (Column & { oid: number })[];
  /** The primary key, else the replica identity index; [] when neither. */
  key: string[];
  /** d (default: the primary key), f (full), i (index), n (nothing); null when missing. */
  identity: string | null;
};

export const q = (name: string) => quoteIdent(name, 'postgres');

/** `schema.table`, or a table of `public`; throws INVALID_STATEMENT for anything else. */
export function tableParts(name: string): { schema: string; table: string; sql: string } {
  const t = parseTableName(name, 'postgres');
  const schema = t.schema ?? 'public';
  return { schema, table: t.name, sql: `${q(schema)}.${q(t.name)}` };
}

export async function describeTables(client: pg.Client, names: string[]): Promise<CapturedTable[]> {
  const parts = names.map(tableParts);
  const r = await client.query<{
    i: number;
    oid: number | null;
    identity: string | null;
    columns: { name: string; type: string; oid: number }[] | null;
    pkey: string[] | null;
    ikey: string[] | null;
  }>(
    `SELECT t.i::int AS i, c.oid::int AS oid, c.relreplident::text AS identity,
            (SELECT json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, NULL),
                    'oid', a.atttypid::int) ORDER BY a.attnum)
               FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            (SELECT array_agg(a.attname::text ORDER BY k.ord)
               FROM pg_catalog.pg_index x
               CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
              WHERE x.indrelid = c.oid AND x.indisprimary) AS pkey,
            (SELECT array_agg(a.attname::text ORDER BY k.ord)
               FROM pg_catalog.pg_index x
               CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
              WHERE x.indrelid = c.oid AND x.indisreplident) AS ikey
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(s, n, i)
       LEFT JOIN pg_catalog.pg_namespace ns ON ns.nspname = t.s
       LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = ns.oid AND c.relname = t.n AND c.relkind IN ('r', 'p')
      ORDER BY t.i`,
    [parts.map((p) => p.schema), parts.map((p) => p.table)],
  );
  return r.rows.map((row, i) => ({
    name: names[i],
    ...parts[i],
    oid: row.oid,
    columns: row.columns ?? [],
    key: row.pkey ?? row.ikey ?? [],
    identity: row.identity,
  }));
}

/**
 * The rows' columns (the contract in connectors/src/types.ts ChangesCapability): the metadata
 * columns, then the union of the tables' columns in table order (a name two tables share
 * appears once, with the first table's type).
 */
export const META_COLUMNS: Column[] = [
  { name: '_op', type: 'text' },
  { name: '_table', type: 'text' },
  { name: '_position', type: 'text' },
  { name: '_committed_at', type: 'timestamp with time zone' },
  { name: '_unchanged', type: 'jsonb' },
];

export type RowShape = {
  columns: Column[];
  /** Per table (by name as the operation writes it): its column names' index in a row. */
  index: Map<string, Map<string, number>>;
};

export function rowShape(tables: CapturedTable[]): RowShape {
  const columns: Column[] = [...META_COLUMNS];
  const at = new Map<string, number>();
  const index = new Map<string, Map<string, number>>();
  for (const t of tables) {
    const own = new Map<string, number>();
    for (const c of t.columns) {
      let i = at.get(c.name);
      if (i === undefined) {
        i = columns.length;
        columns.push({ name: c.name, type: c.type });
        at.set(c.name, i);
      }
      own.set(c.name, i);
    }
    index.set(t.name, own);
  }
  return { columns, index };
}

/** The captured tables as the server's drift check takes them (ConnectorContext.onCapturedSchema). */
export function capturedSchemaOf(tables: CapturedTable[]) {
  return tables.map((t) => ({
    schema: t.schema,
    name: t.table,
    columns: t.oid === null ? null : t.columns.map((c) => ({ name: c.name, type: c.type })),
  }));
}

/** Whether two descriptions of the same tables have the same columns and types. */
export function sameColumns(a: CapturedTable[], b: CapturedTable[]): boolean {
  const text = (ts: CapturedTable[]) => JSON.stringify(capturedSchemaOf(ts));
  return text(a) === text(b);
}
