import type mysql from 'mysql2';
import type { Column } from '../../types';
import { queryMysql } from '../connect';

// The captured tables as the server describes them now: their columns (in table order) and
// primary keys, and the union of their columns that every change row carries (docs/connectors/mysql.md "Change rows").

export type TableName = { name: string; database: string; table: string };

export type TableColumn = {
  name: string;
  /** COLUMN_TYPE, e.g. `bigint(20) unsigned`. */
  type: string;
  /** DATA_TYPE, e.g. `bigint`. */
  dataType: string;
  /** BINARY(n): n, the width the binlog does not pad to. */
  octets: number | null;
};

export type CapturedTable = TableName & {
  columns: TableColumn[];
  /** Primary key columns in key order; empty when the table has none. */
  key: string[];
};

/** `database.table`, or `table` in the connection's database. */
export function tableName(name: string, defaultDatabase: string): TableName | null {
  const parts = name.split('.');
  if (parts.length > 2 || parts.some((p) => p.length === 0)) return null;
  return parts.length === 2
    ? { name, database: parts[0], table: parts[1] }
    : { name, database: defaultDatabase, table: parts[0] };
}

export const quoteName = (n: string) => `\`${n.replaceAll('`', '``')}\``;
export const qualified = (t: TableName) => `${quoteName(t.database)}.${quoteName(t.table)}`;

/** The tables that exist, described; a missing one is absent from the map. */
export async function describeTables(
  connection: mysql.Connection,
  tables: TableName[],
): Promise<Map<string, CapturedTable>> {
  const out = new Map<string, CapturedTable>();
  if (tables.length === 0) return out;
  const pairs = tables
    .map((t) => `(${connection.escape(t.database)}, ${connection.escape(t.table)})`)
    .join(', ');
  const columns = await queryMysql<any[]>(
    connection,
    `SELECT TABLE_SCHEMA AS db, TABLE_NAME AS tbl, COLUMN_NAME AS name, COLUMN_TYPE AS type,
            DATA_TYPE AS data_type, CHARACTER_OCTET_LENGTH AS octets, COLUMN_KEY AS col_key
       FROM information_schema.COLUMNS
      WHERE (TABLE_SCHEMA, TABLE_NAME) IN (${pairs})
      ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`,
  );
  const keys = await queryMysql<any[]>(
    connection,
    `SELECT TABLE_SCHEMA AS db, TABLE_NAME AS tbl, COLUMN_NAME AS name
       FROM information_schema.KEY_COLUMN_USAGE
      WHERE CONSTRAINT_NAME = 'PRIMARY' AND (TABLE_SCHEMA, TABLE_NAME) IN (${pairs})
      ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`,
  );
  for (const t of tables) {
    const own = columns.filter((c) => c.db === t.database && c.tbl === t.table);
    if (own.length === 0) continue;
    out.set(t.name, {
      ...t,
      columns: own.map((c) => {
        const dataType = String(c.data_type).toLowerCase();
        return {
          name: String(c.name),
          type: String(c.type),
          dataType,
          octets: dataType === 'binary' && c.octets !== null ? Number(c.octets) : null,
        };
      }),
      key: keys.filter((k) => k.db === t.database && k.tbl === t.table).map((k) => String(k.name)),
    });
  }
  return out;
}

export const META_COLUMNS: Column[] = [
  { name: '_op', type: 'text' },
  { name: '_table', type: 'text' },
  { name: '_position', type: 'text' },
  { name: '_committed_at', type: 'timestamptz' },
  { name: '_unchanged', type: 'json' },
];

/** The union of the tables' columns, first table first; a name two tables share is one column. */
export function unionColumns(tables: CapturedTable[]): { columns: Column[]; index: Map<string, number> } {
  const columns: Column[] = [...META_COLUMNS];
  const index = new Map<string, number>();
  for (const t of tables) {
    for (const c of t.columns) {
      if (index.has(c.name)) continue;
      index.set(c.name, columns.length);
      columns.push({ name: c.name, type: c.type });
    }
  }
  return { columns, index };
}

/** A single integer key: the snapshot copies such a table in key ranges across runs. */
export function integerKey(t: CapturedTable): string | null {
  if (t.key.length !== 1) return null;
  const col = t.columns.find((c) => c.name === t.key[0]);
  return col && /^(tinyint|smallint|mediumint|int|bigint)$/.test(col.dataType) ? col.name : null;
}
