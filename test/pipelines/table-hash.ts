// An order-independent hash of a table, computed in SQL on its own server over a canonical text
// form of each row (docs/cdc.md "Worked example"): the md5 of each row's text, sorted, then the
// md5 of them all. The same rows give the same hash on PostgreSQL and MySQL/MariaDB whatever
// order either stores them in; the count comes along to make a difference readable.

export type TableHash = { rows: number; hash: string };

/** `row` is a SQL expression giving each row's canonical text (the same text on both sides). */
export const pgHashSql = (table: string, row: string) =>
  `SELECT count(*)::int AS rows, coalesce(md5(string_agg(h, '' ORDER BY h)), '') AS hash
     FROM (SELECT md5(${row}) AS h FROM ${table}) r`;

export const mysqlHashSql = (table: string, row: string) =>
  `SELECT COUNT(*) AS \`rows\`, COALESCE(MD5(GROUP_CONCAT(h ORDER BY h SEPARATOR '')), '') AS hash
     FROM (SELECT MD5(${row}) AS h FROM ${table}) r`;

/** The orders table of examples/cdc-orders as text: a timestamp as UTC with microseconds, the note by its md5. */
export const PG_ORDERS_ROW = (placedAtUtc: string) =>
  `concat_ws('|', id, customer, amount, status, to_char(${placedAtUtc}, 'YYYY-MM-DD HH24:MI:SS.US'), coalesce(md5(note), '~'))`;
export const MYSQL_ORDERS_ROW = `CONCAT_WS('|', id, customer, amount, status, DATE_FORMAT(placed_at, '%Y-%m-%d %H:%i:%s.%f'), COALESCE(MD5(note), '~'))`;

export const asHash = (row: { rows: unknown; hash: unknown }): TableHash => ({
  rows: Number(row.rows),
  hash: String(row.hash),
});
