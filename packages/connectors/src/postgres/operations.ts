import type pg from 'pg';
import Cursor from 'pg-cursor';
import type { SqlStatement } from '../relational/config';
import { compileStatement, leadingKeyword } from '../relational/placeholders';
import { RowCollector, sqlResult } from '../relational/rows';
import { withStatementSession } from '../relational/statement-session';
import type { Column, ConnectorContext, QueryResult, SchemaDocument } from '../types';
import { closePg, connectPg, destroy, type PgConnection, pgError, pgTypes } from './connect';

// Names of the types a result column most often has; anything else is looked up in pg_type.
const TYPE_NAMES: Record<number, string> = {
  16: 'boolean',
  17: 'bytea',
  18: 'char',
  19: 'name',
  20: 'bigint',
  21: 'smallint',
  23: 'integer',
  25: 'text',
  26: 'oid',
  114: 'json',
  700: 'real',
  701: 'double precision',
  705: 'unknown',
  1042: 'character',
  1043: 'character varying',
  1082: 'date',
  1083: 'time without time zone',
  1114: 'timestamp without time zone',
  1184: 'timestamp with time zone',
  1186: 'interval',
  1700: 'numeric',
  2950: 'uuid',
  3802: 'jsonb',
  1000: 'boolean[]',
  1005: 'smallint[]',
  1007: 'integer[]',
  1009: 'text[]',
  1015: 'character varying[]',
  1016: 'bigint[]',
  1022: 'double precision[]',
};

const hex = (b: Buffer) => `\\x${b.toString('hex')}`;

export async function columnsOf(client: pg.Client, fields: pg.FieldDef[]): Promise<Column[]> {
  const unknown = [...new Set(fields.map((f) => f.dataTypeID).filter((oid) => !TYPE_NAMES[oid]))];
  const names = new Map<number, string>();
  if (unknown.length > 0) {
    const r = await client
      .query<{ oid: number; name: string }>(
        'SELECT oid::int AS oid, format_type(oid, NULL) AS name FROM pg_catalog.pg_type WHERE oid = ANY($1::oid[])',
        [unknown],
      )
      .catch(() => ({ rows: [] as { oid: number; name: string }[] }));
    for (const row of r.rows) names.set(row.oid, row.name);
  }
  return fields.map((f) => ({
    name: f.name,
    type: TYPE_NAMES[f.dataTypeID] ?? names.get(f.dataTypeID) ?? `oid:${f.dataTypeID}`,
  }));
}

/** Runs `work` on a fresh session, within the statement deadline, and always closes it. */
const withSession = <T>(
  conn: PgConnection,
  ctx: ConnectorContext,
  opts: { readOnly?: boolean; values?: unknown[] },
  work: (client: pg.Client) => Promise<T>,
): Promise<T> =>
  withStatementSession(
    ctx,
    conn.config.statement_timeout_seconds,
    {
      open: () => connectPg(conn, ctx, opts),
      destroy,
      close: closePg,
      error: (err) => pgError(err, conn, opts.values),
    },
    work,
  );

export async function testPg(conn: PgConnection, ctx: ConnectorContext): Promise<void> {
  await withSession(conn, ctx, {}, async (client) => {
    await client.query('SELECT 1');
  });
}

const MAX_SCHEMA_COLUMNS = 100_000;

export async function importPgSchema(conn: PgConnection, ctx: ConnectorContext): Promise<SchemaDocument> {
  return withSession(conn, ctx, { readOnly: true }, async (client) => {
    // information_schema shows only what this user may use, which is what queries can reach.
    const r = await client.query<{
      table_schema: string;
      table_name: string;
      column_name: string;
      type: string;
    }>(
      `SELECT c.table_schema, c.table_name, c.column_name,
              CASE WHEN c.data_type = 'ARRAY' THEN ltrim(c.udt_name, '_') || '[]'
                   WHEN c.data_type = 'USER-DEFINED' THEN c.udt_name
                   ELSE c.data_type END AS type
         FROM information_schema.columns c
        WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema')
          AND c.table_schema NOT LIKE 'pg\\_toast%' AND c.table_schema NOT LIKE 'pg\\_temp\\_%'
        ORDER BY c.table_schema, c.table_name, c.ordinal_position
        LIMIT ${MAX_SCHEMA_COLUMNS}`,
    );
    const tables: { schema: string; name: string; columns: Column[] }[] = [];
    for (const row of r.rows) {
      let t = tables[tables.length - 1];
      if (!t || t.schema !== row.table_schema || t.name !== row.table_name) {
        t = { schema: row.table_schema, name: row.table_name, columns: [] };
        tables.push(t);
      }
      t.columns.push({ name: row.column_name, type: row.type });
    }
    return { schema_type: 'relational', type: 'postgres', tables };
  });
}

export async function executePg(
  conn: PgConnection,
  statement: SqlStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const readOnly = ctx.readOnly === true;
  const compiled = compileStatement(statement.sql, parameters, 'postgres');
  return withSession(conn, ctx, { readOnly, values: compiled.values }, async (client) => {
    if (readOnly) await client.query('BEGIN READ ONLY');
    const cursor = client.query(
      new Cursor(compiled.text, compiled.values, { rowMode: 'array', types: pgTypes }),
    );
    const collector = new RowCollector(ctx.limits, hex);
    const batch = Math.min(500, ctx.limits.maxRows + 1);
    reading: for (;;) {
      // A failed read has already synced the protocol; the session is closed afterwards.
      const rows = await cursor.read(batch);
      if (rows.length === 0) break;
      for (const row of rows) if (!collector.add(row)) break reading;
    }
    // Closing the portal stops the server from producing the rows we will not keep.
    await cursor.close();
    const result = cursor._result;
    const columns = await columnsOf(client, result.fields ?? []);
    if (readOnly) await client.query('ROLLBACK');
    const command = result.command ?? leadingKeyword(statement.sql);
    const counted = command !== null && ['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY'].includes(command);
    return sqlResult(
      {
        columns,
        rows: collector.rows,
        command,
        affected_rows: counted && !collector.truncated ? (result.rowCount ?? null) : null,
      },
      collector.truncated,
    );
  });
}
