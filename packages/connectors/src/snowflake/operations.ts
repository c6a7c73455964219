import type { SqlStatement } from '../relational/config';
import { compileStatement, leadingKeyword } from '../relational/placeholders';
import { RowCollector, sqlResult } from '../relational/rows';
import {
  type Column,
  type ConnectorContext,
  ConnectorError,
  type QueryResult,
  type SchemaDocument,
} from '../types';
import {
  openSnowflake,
  plain,
  type SfStatement,
  type SnowflakeConnection,
  type SnowflakeSession,
  snowflakeError,
  snowflakeTypeName,
} from './connect';

// Connection test, schema import (INFORMATION_SCHEMA) and saved-query execution. `{{name}}`
// placeholders become `?` binds (the placeholder lexer's `?` dialect); values never enter the text.

/** Statements a read-only data source may run: Snowflake has no read-only session to rely on. */
const READ_KEYWORDS = new Set(['SELECT', 'WITH', 'SHOW', 'DESCRIBE', 'DESC', 'EXPLAIN', 'VALUES']);

export async function withSnowflake<T>(
  conn: SnowflakeConnection,
  ctx: ConnectorContext,
  work: (s: SnowflakeSession) => Promise<T>,
  values: readonly unknown[] = [],
): Promise<T> {
  const s = await openSnowflake(conn, ctx);
  try {
    return await work(s);
  } catch (err) {
    throw snowflakeError(err, conn, values);
  } finally {
    await s.close();
  }
}

export async function testSnowflake(conn: SnowflakeConnection, ctx: ConnectorContext): Promise<void> {
  await withSnowflake(conn, ctx, async (s) => {
    await s.all('SELECT 1');
  });
}

const MAX_SCHEMA_COLUMNS = 100_000;

export async function importSnowflakeSchema(
  conn: SnowflakeConnection,
  ctx: ConnectorContext,
): Promise<SchemaDocument> {
  return withSnowflake(conn, ctx, async (s) => {
    // INFORMATION_SCHEMA of the session's database shows what the role may use.
    const { rows } = await s.all(
      `SELECT table_schema, table_name, column_name, data_type, ordinal_position FROM information_schema.columns WHERE table_schema <> 'INFORMATION_SCHEMA' ORDER BY table_schema, table_name, ordinal_position LIMIT ${MAX_SCHEMA_COLUMNS}`,
    );
    const tables: { schema: string; name: string; columns: Column[] }[] = [];
    for (const r of rows) {
      const [schema, name, column, type] = r.map((v) => String(v));
      if (schema === 'INFORMATION_SCHEMA') continue;
      let t = tables[tables.length - 1];
      if (!t || t.schema !== schema || t.name !== name) {
        t = { schema, name, columns: [] };
        tables.push(t);
      }
      t.columns.push({ name: column, type });
    }
    return { schema_type: 'relational', type: 'snowflake', tables };
  });
}

export function columnsOf(statement: SfStatement): Column[] {
  return (statement.getColumns() ?? []).map((c) => ({
    name: c.getName(),
    type: snowflakeTypeName(c.getType(), c.getScale()),
  }));
}

export async function executeSnowflake(
  conn: SnowflakeConnection,
  statement: SqlStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const compiled = compileStatement(statement.sql, parameters, 'mysql');
  const command = leadingKeyword(statement.sql);
  if (ctx.readOnly && (command === null || !READ_KEYWORDS.has(command))) {
    throw new ConnectorError(
      'PERMISSION_DENIED',
      `the data source is read-only: it runs SELECT, WITH, SHOW, DESCRIBE and EXPLAIN statements, not ${command ?? 'this statement'}`,
    );
  }
  return withSnowflake(
    conn,
    ctx,
    async (s) => {
      const st = await s.stream(compiled.text, compiled.values);
      const collector = new RowCollector(ctx.limits, (b) => b.toString('hex'));
      const rows = st.streamRows();
      try {
        for await (const row of rows as AsyncIterable<unknown[]>) {
          if (!collector.add(row.map(plain))) break;
        }
      } finally {
        // Stops the chunk downloads of rows we will not keep.
        (rows as any).destroy?.();
      }
      const counted = command !== null && ['INSERT', 'UPDATE', 'DELETE', 'MERGE'].includes(command);
      return sqlResult(
        {
          columns: columnsOf(st),
          rows: collector.rows,
          command,
          affected_rows: counted ? (st.getNumUpdatedRows() ?? null) : null,
        },
        collector.truncated,
      );
    },
    compiled.values,
  );
}
