import type mysql from 'mysql2';
import type { SqlStatement } from '../relational/config';
import { compileStatement, leadingKeyword } from '../relational/placeholders';
import { RowCollector, sqlResult } from '../relational/rows';
import { withStatementSession } from '../relational/statement-session';
import type { Column, ConnectorContext, QueryResult, SchemaDocument } from '../types';
import {
  closeMysql,
  connectMysql,
  destroyMysql,
  type MysqlConnection,
  mysqlError,
  queryMysql,
} from './connect';
import { destroyAndKill } from './kill';

export type Field = {
  name: string;
  columnType: number;
  characterSet: number;
  /** Node's name of the column's character set (mysql2's, e.g. `utf8`, `binary`). */
  encoding?: string;
  extendedTypeName?: string;
  extendedFormat?: string;
  /** Column flags (UNSIGNED is 32). */
  flags?: number;
};

const BINARY_CHARSET = 63;

// Wire type codes → SQL type names; text and binary share codes and differ by character set.
const TYPE_NAMES: Record<number, string> = {
  0: 'decimal',
  1: 'tinyint',
  2: 'smallint',
  3: 'int',
  4: 'float',
  5: 'double',
  6: 'null',
  7: 'timestamp',
  8: 'bigint',
  9: 'mediumint',
  10: 'date',
  11: 'time',
  12: 'datetime',
  13: 'year',
  14: 'date',
  15: 'varchar',
  16: 'bit',
  245: 'json',
  246: 'decimal',
  247: 'enum',
  248: 'set',
  255: 'geometry',
};

export function typeName(f: Field): string {
  if (f.extendedFormat === 'json') return 'json';
  if (f.extendedTypeName) return f.extendedTypeName;
  const binary = f.characterSet === BINARY_CHARSET;
  switch (f.columnType) {
    case 249:
      return binary ? 'tinyblob' : 'tinytext';
    case 250:
      return binary ? 'mediumblob' : 'mediumtext';
    case 251:
      return binary ? 'longblob' : 'longtext';
    case 252:
      return binary ? 'blob' : 'text';
    case 253:
      return binary ? 'varbinary' : 'varchar';
    case 254:
      return binary ? 'binary' : 'char';
    default:
      return TYPE_NAMES[f.columnType] ?? `type:${f.columnType}`;
  }
}

const hex = (b: Buffer) => `0x${b.toString('hex')}`;

/** Runs `work` on a fresh session, within the statement deadline, and always closes it. */
const withSession = <T>(
  conn: MysqlConnection,
  ctx: ConnectorContext,
  opts: { readOnly?: boolean; values?: unknown[] },
  work: (connection: mysql.Connection) => Promise<T>,
): Promise<T> =>
  withStatementSession(
    ctx,
    conn.config.statement_timeout_seconds,
    {
      open: () => connectMysql(conn, ctx, opts),
      destroy: destroyAndKill(conn, ctx),
      close: closeMysql,
      error: (err) => mysqlError(err, conn, opts.values),
    },
    work,
  );

export async function testMysql(conn: MysqlConnection, ctx: ConnectorContext): Promise<void> {
  await withSession(conn, ctx, {}, async (connection) => {
    await queryMysql(connection, 'SELECT 1');
  });
}

const MAX_SCHEMA_COLUMNS = 100_000;

export async function importMysqlSchema(
  conn: MysqlConnection,
  ctx: ConnectorContext,
): Promise<SchemaDocument> {
  return withSession(conn, ctx, { readOnly: true }, async (connection) => {
    const rows = await queryMysql<
      { table_schema: string; table_name: string; column_name: string; type: string }[]
    >(
      connection,
      `SELECT TABLE_SCHEMA AS table_schema, TABLE_NAME AS table_name, COLUMN_NAME AS column_name,
              COLUMN_TYPE AS type
         FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = DATABASE()
        ORDER BY TABLE_NAME, ORDINAL_POSITION
        LIMIT ${MAX_SCHEMA_COLUMNS}`,
    );
    const tables: { schema: string; name: string; columns: Column[] }[] = [];
    for (const row of rows) {
      let t = tables[tables.length - 1];
      if (!t || t.name !== row.table_name) {
        t = { schema: row.table_schema, name: row.table_name, columns: [] };
        tables.push(t);
      }
      t.columns.push({ name: row.column_name, type: String(row.type) });
    }
    return { schema_type: 'relational', type: 'mysql', tables };
  });
}

type Streamed = { fields: Field[] | null; affectedRows: number | null; stopped: boolean };

/**
 * Runs a prepared statement and streams its first result into the collector. When the
 * collector is full the socket is torn down: MySQL has no way to stop a result half-way, and
 * reading on would transfer every remaining row.
 */
function streamExecute(
  connection: mysql.Connection,
  text: string,
  values: unknown[],
  collector: RowCollector,
): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const out: Streamed = { fields: null, affectedRows: null, stopped: false };
    let settled = false;
    const cmd = connection.execute({ sql: text, values: values as any[], rowsAsArray: true });
    cmd.on('fields', (fields: Field[], index?: number) => {
      if (!index && !out.fields) out.fields = fields;
    });
    cmd.on('result', (row: any, index?: number) => {
      if (settled || index) return;
      if (!out.fields) {
        out.affectedRows = typeof row?.affectedRows === 'number' ? row.affectedRows : null;
        return;
      }
      if (!collector.add(row as unknown[])) {
        settled = true;
        out.stopped = true;
        destroyMysql(connection);
        resolve(out);
      }
    });
    cmd.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(out);
    });
    cmd.on('error', (err: unknown) => {
      if (settled) return;
      settled = true;
      reject(err);
    });
  });
}

export async function executeMysql(
  conn: MysqlConnection,
  statement: SqlStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const readOnly = ctx.readOnly === true;
  const compiled = compileStatement(statement.sql, parameters, 'mysql');
  return withSession(conn, ctx, { readOnly, values: compiled.values }, async (connection) => {
    if (readOnly) await queryMysql(connection, 'START TRANSACTION READ ONLY');
    const collector = new RowCollector(ctx.limits, hex);
    const streamed = await streamExecute(connection, compiled.text, compiled.values, collector);
    if (readOnly && !streamed.stopped) await queryMysql(connection, 'ROLLBACK');
    const columns = (streamed.fields ?? []).map((f) => ({ name: f.name, type: typeName(f) }));
    return sqlResult(
      {
        columns,
        rows: collector.rows,
        command: leadingKeyword(statement.sql),
        affected_rows: streamed.fields ? null : streamed.affectedRows,
      },
      collector.truncated,
    );
  });
}
