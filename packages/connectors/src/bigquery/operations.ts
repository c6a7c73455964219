import { randomBytes } from 'node:crypto';
import { googleError } from '../google/auth';
import { RowCollector, sqlResult } from '../relational/rows';
import { type ConnectorContext, ConnectorError, type QueryResult, type SchemaDocument } from '../types';
import { type BigQueryConnection, capped, type OpenBigQuery, openBigQuery, tableRef } from './client';
import { columnType, runQuery } from './query';

// Test connection, schema import and saved-query execution.

export type BigQueryStatement =
  | {
      type: 'bigquery';
      operation: 'query';
      sql: string;
      dataset?: string;
      maximum_bytes_billed?: number;
      timeout_seconds?: number;
    }
  | {
      type: 'bigquery';
      operation: 'insert_rows';
      table: string;
      rows: string | Record<string, unknown>[];
      dataset?: string;
      insert_id_prefix?: string;
      timeout_seconds?: number;
    };

/** Opens a client, runs `fn`, maps any failure to a sanitized ConnectorError. */
export async function withBigQuery<T>(
  conn: BigQueryConnection,
  ctx: ConnectorContext,
  timeoutSeconds: number,
  what: string,
  fn: (c: OpenBigQuery) => Promise<T>,
  detail = false,
): Promise<T> {
  let client: OpenBigQuery | null = null;
  try {
    client = await openBigQuery(conn, ctx, timeoutSeconds);
    return await fn(client);
  } catch (err) {
    throw googleError(err, what, detail);
  } finally {
    client?.close();
  }
}

export function testBigQuery(conn: BigQueryConnection, ctx: ConnectorContext): Promise<void> {
  return withBigQuery(conn, ctx, conn.config.timeout_seconds, 'test connection', async (c) => {
    // Listing one dataset proves the key, the token exchange and access to the project.
    await c.checked(() => c.bq.getDatasets({ maxResults: 1, autoPaginate: false }));
  });
}

const MAX_TABLES = 2000;

export function importBigQuerySchema(
  conn: BigQueryConnection,
  ctx: ConnectorContext,
): Promise<SchemaDocument> {
  return withBigQuery(conn, ctx, conn.config.timeout_seconds, 'schema import', async (c) => {
    const tables: { schema: string; name: string; columns: { name: string; type: string }[] }[] = [];
    const [datasets] = await c.checked(() => c.bq.getDatasets({ autoPaginate: true }));
    for (const ds of datasets) {
      const [list] = await c.checked(() => ds.getTables({ autoPaginate: true }));
      for (const t of list) {
        if (tables.length >= MAX_TABLES) break;
        const [meta] = await c.checked(() => t.getMetadata());
        const fields: { name: string; type: string; mode?: string; fields?: unknown[] }[] =
          meta?.schema?.fields ?? [];
        tables.push({
          schema: ds.id ?? '',
          name: t.id ?? '',
          columns: flatten(fields),
        });
      }
    }
    return { schema_type: 'relational', type: 'bigquery', tables };
  });
}

/** Nested RECORD fields as `parent.child` columns beside the parent. */
function flatten(fields: { name: string; type: string; mode?: string; fields?: unknown[] }[], prefix = '') {
  const out: { name: string; type: string }[] = [];
  for (const f of fields) {
    out.push({ name: prefix + f.name, type: f.mode === 'REPEATED' ? `ARRAY<${f.type}>` : f.type });
    if (Array.isArray(f.fields)) out.push(...flatten(f.fields as typeof fields, `${prefix}${f.name}.`));
  }
  return out;
}

const READ_KEYWORDS = new Set(['SELECT', 'WITH']);

export async function executeBigQuery(
  conn: BigQueryConnection,
  statement: BigQueryStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const timeout =
    capped(statement.timeout_seconds, conn.config.timeout_seconds) ?? conn.config.timeout_seconds;
  const value = (name: string) => {
    if (!(name in parameters))
      throw new ConnectorError('INVALID_STATEMENT', `parameter ${name} has no value`);
    return parameters[name];
  };
  if (statement.operation === 'query') {
    const keyword = /^\s*(?:--[^\n]*\n\s*)*\(?\s*([A-Za-z]+)/.exec(statement.sql)?.[1]?.toUpperCase() ?? null;
    if (ctx.readOnly && (keyword === null || !READ_KEYWORDS.has(keyword)))
      throw new ConnectorError('PERMISSION_DENIED', 'the data source is read-only: only SELECT queries run');
    return withBigQuery(
      conn,
      ctx,
      timeout,
      'query',
      async (c) => {
        const collector = new RowCollector(ctx.limits, (b) => b.toString('base64'));
        const result = await runQuery(
          c,
          conn,
          {
            sql: statement.sql,
            values: value,
            dataset: statement.dataset,
            maximumBytesBilled: statement.maximum_bytes_billed,
            timeoutSeconds: timeout,
            pageSize: Math.min(1000, ctx.limits.maxRows + 1),
          },
          ctx.signal,
        );
        reading: for await (const page of result.pages) {
          for (const row of page) if (!collector.add(row)) break reading;
        }
        return sqlResult(
          {
            columns: result.columns.map((col) => ({ name: col.name, type: col.type })),
            rows: collector.rows,
            command: keyword,
            affected_rows: null,
          },
          collector.truncated,
        );
      },
      true,
    );
  }
  if (ctx.readOnly)
    throw new ConnectorError('PERMISSION_DENIED', 'the data source is read-only: insert_rows is refused');
  const rows = rowsOf(statement.rows, parameters);
  const ref = tableRef(statement.table, statement.dataset, conn);
  const prefix = renderPrefix(
    statement.insert_id_prefix,
    parameters,
    `exec-${randomBytes(6).toString('hex')}`,
  );
  return withBigQuery(
    conn,
    ctx,
    timeout,
    'insert_rows',
    async (c) => {
      const inserted = await insertRows(c, ref, rows, prefix, 0);
      return {
        result_type: 'sql',
        payload: { columns: [], rows: [], command: 'INSERT', affected_rows: inserted },
        row_count: 0,
        truncated: false,
      };
    },
    true,
  );
}

/** `{{runtime.run_slug}}` and `{{param}}` in the insert id prefix. */
export function renderPrefix(
  prefix: string | undefined,
  parameters: Record<string, unknown>,
  runSlug: string,
): string {
  if (prefix === undefined) return `${runSlug}-`;
  return prefix.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g, (_, name: string) => {
    if (name === 'runtime.run_slug') return runSlug;
    if (name in parameters) return String(parameters[name]);
    throw new ConnectorError('INVALID_STATEMENT', `insert_id_prefix uses {{${name}}}, which has no value`);
  });
}

function rowsOf(rows: string | Record<string, unknown>[], parameters: Record<string, unknown>) {
  let value: unknown = rows;
  if (typeof rows === 'string') {
    const m = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/.exec(rows.trim());
    if (m) value = parameters[m[1]];
    else {
      try {
        value = JSON.parse(rows);
      } catch {
        value = null;
      }
    }
  }
  if (!Array.isArray(value) || value.some((r) => r === null || typeof r !== 'object' || Array.isArray(r)))
    throw new ConnectorError(
      'INVALID_STATEMENT',
      'rows must be an array of objects (or {{param}} naming one)',
    );
  return value as Record<string, unknown>[];
}

export const INSERT_BATCH = 500;

/** tabledata.insertAll in batches, each row with its insert id (`prefix` + position). */
export async function insertRows(
  c: OpenBigQuery,
  ref: { project: string; dataset: string; table: string },
  rows: Record<string, unknown>[],
  prefix: string,
  offset: number,
): Promise<number> {
  const table = c.bq.dataset(ref.dataset, { projectId: ref.project }).table(ref.table);
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const batch = rows.slice(i, i + INSERT_BATCH).map((json, j) => ({
      insertId: `${prefix}${offset + i + j}`,
      json: rowJson(json),
    }));
    try {
      await c.checked(() =>
        table.insert(batch, { raw: true, skipInvalidRows: false, ignoreUnknownValues: false }),
      );
    } catch (err) {
      throw insertError(err);
    }
  }
  return rows.length;
}

function rowJson(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (typeof v === 'bigint') out[k] = v.toString();
    else if (v instanceof Date) out[k] = v.toISOString();
    else if (Buffer.isBuffer(v) || v instanceof Uint8Array) out[k] = Buffer.from(v).toString('base64');
    else out[k] = v === undefined ? null : v;
  }
  return out;
}

/** The SDK's PartialFailureError names rows and reasons; values are never quoted. */
function insertError(err: unknown): unknown {
  const e = err as { name?: string; errors?: { errors?: { reason?: string; location?: string }[] }[] };
  if (e?.name === 'PartialFailureError' && Array.isArray(e.errors)) {
    const first = e.errors[0]?.errors?.[0];
    return new ConnectorError(
      'QUERY_FAILED',
      `insert_rows: ${e.errors.length} row(s) rejected (${first?.reason ?? 'invalid'}${first?.location ? ` at ${first.location}` : ''})`,
    );
  }
  return err;
}

export { columnType };
