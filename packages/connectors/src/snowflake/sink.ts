import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { familyOf, type TypeFamily } from '../relational/column-types';
import { signalOf, sinkPlan } from '../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../types';
import { openSnowflake, type SnowflakeConnection, snowflakeError } from './connect';

// A pipeline sink on Snowflake: batched INSERTs with array binding (one statement, many rows of
// bound values; never a value in the SQL text) inside one transaction, committed at the end.
// `replace` deletes the rows first in the same transaction. A created table is created before
// the transaction (Snowflake commits DDL implicitly). `upsert` runs MERGE statements whose
// source is a bound VALUES list, by the write's key columns.

const MAX_ROWS_PER_INSERT = 5000;
/** Bound values per statement: keeps a request body well under Snowflake's size limits. */
const MAX_VALUES_PER_INSERT = 100_000;

/** An upsert is a MERGE whose source is a bound VALUES list (flat binds). */
const MAX_ROWS_PER_MERGE = 1000;
const MAX_VALUES_PER_MERGE = 50_000;

const SIMPLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** MERGE of `rows` bound rows into the table by the key columns (indexes into `targets`). */
export function mergeSql(table: string, targets: string[], keys: number[], rows: number): string {
  const tuple = `(${targets.map(() => '?').join(', ')})`;
  const source = `SELECT ${targets.map((t, i) => `$${i + 1} AS ${t}`).join(', ')} FROM VALUES ${Array.from({ length: rows }, () => tuple).join(', ')}`;
  const on = keys.map((i) => `T.${targets[i]} = S.${targets[i]}`).join(' AND ');
  const rest = targets.filter((_, i) => !keys.includes(i));
  const update =
    rest.length > 0 ? ` WHEN MATCHED THEN UPDATE SET ${rest.map((c) => `T.${c} = S.${c}`).join(', ')}` : '';
  return `MERGE INTO ${table} T USING (${source}) S ON ${on}${update} WHEN NOT MATCHED THEN INSERT (${targets.join(', ')}) VALUES (${targets.map((c) => `S.${c}`).join(', ')})`;
}

/** A column name as SQL: simple names unquoted (Snowflake folds them to upper case), others quoted. */
const columnSql = (name: string) =>
  SIMPLE.test(name) ? name.toUpperCase() : `"${name.replace(/"/g, '""')}"`;
const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

const TYPES: Record<TypeFamily, string> = {
  boolean: 'BOOLEAN',
  integer: 'NUMBER(38,0)',
  bigint: 'NUMBER(38,0)',
  double: 'FLOAT',
  numeric: 'NUMBER(38,9)',
  text: 'VARCHAR',
  // Bound JSON text cannot go into a VARIANT through VALUES; it stays text.
  json: 'VARCHAR',
  date: 'DATE',
  timestamp: 'TIMESTAMP_NTZ',
  timestamptz: 'TIMESTAMP_TZ',
  time: 'TIME',
  bytes: 'BINARY',
  uuid: 'VARCHAR(36)',
};

/** A value as the SDK binds it: scalars as they are, the rest as text. */
export function bindable(v: unknown): string | number | boolean | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  return JSON.stringify(v);
}

export async function writeSnowflake(
  conn: SnowflakeConnection,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  const plan = await sinkPlan(input, step, ctx, 'mysql');
  const { write, table, names } = plan;
  if (write.mode === 'apply')
    throw new ConnectorError(
      'UNSUPPORTED_OPERATION',
      'Snowflake sinks insert, upsert or replace; apply (change rows by key) is for PostgreSQL and MySQL sinks — insert appends the change rows as a changelog',
    );
  // Table parts are plain identifiers (checked by sinkPlan): unquoted, as Snowflake folds them.
  const tableSql = [table.schema, table.name].filter(Boolean).join('.').toUpperCase();
  const s = await openSnowflake(conn, { ...ctx, signal: signalOf(step, ctx) });
  let rows = 0;
  let bytes = 0;
  let open = false;
  try {
    const schemaMatch = table.schema ? 'table_schema = ?' : 'table_schema = CURRENT_SCHEMA()';
    const lookup = async () =>
      (
        await s.all(
          `SELECT column_name, data_type FROM information_schema.columns WHERE ${schemaMatch} AND table_name = ? ORDER BY ordinal_position`,
          [...(table.schema ? [table.schema.toUpperCase()] : []), table.name.toUpperCase()],
        )
      ).rows.map((r) => String(r[0]));
    let existing = await lookup();
    if (existing.length === 0) {
      if (!write.create_table) {
        throw new ConnectorError(
          'QUERY_FAILED',
          `table ${table.display} does not exist; set create_table to create it`,
        );
      }
      if (names.length === 0) {
        step.log('info', `no input rows: table ${table.display} was not created`);
        return { rows: 0, bytes: 0 };
      }
      const defs = plan.rows.columns.map((c) => `${columnSql(c.name)} ${TYPES[familyOf(c.type)]}`);
      await s.all(`CREATE TABLE IF NOT EXISTS ${tableSql} (${defs.join(', ')})`);
      step.log('info', `created table ${table.display}`);
      existing = await lookup();
    }
    // A payload column matches its exact name, else the one name that differs only in case.
    const targets = names.map((n) => {
      const exact = existing.find((e) => e === n);
      const match = exact ?? existing.find((e) => e.toUpperCase() === n.toUpperCase());
      if (match === undefined) {
        throw new ConnectorError(
          'QUERY_FAILED',
          `column ${JSON.stringify(n)} is not in table ${table.display}`,
        );
      }
      return quoted(match);
    });
    const upsert = write.mode === 'upsert';
    const perInsert = Math.max(
      1,
      upsert
        ? Math.min(MAX_ROWS_PER_MERGE, Math.floor(MAX_VALUES_PER_MERGE / Math.max(1, names.length)))
        : Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_VALUES_PER_INSERT / Math.max(1, names.length))),
    );
    const insert = `INSERT INTO ${tableSql} (${targets.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;
    const keyIndexes = (write.key ?? []).map((k) => names.indexOf(k));

    await s.all('BEGIN');
    open = true;
    if (write.mode === 'replace') await s.all(`DELETE FROM ${tableSql}`);
    let pending: unknown[][] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pending.length === 0) return;
      if (upsert) {
        // Within a statement the last row of a key wins (MERGE must not see a key twice);
        // statements run in order, so the last row of a key wins over the whole run.
        const byKey = new Map<string, unknown[]>();
        for (const r of pending) byKey.set(JSON.stringify(keyIndexes.map((i) => r[i])), r);
        const unique = [...byKey.values()];
        await s.all(mergeSql(tableSql, targets, keyIndexes, unique.length), unique.flat());
      } else await s.all(insert, pending);
      rows += pending.length;
      bytes += pendingBytes;
      pending = [];
      pendingBytes = 0;
    };
    for await (const batch of plan.rows.batches) {
      if (names.length === 0) continue;
      for (const row of batch) {
        const values = row.map(bindable);
        pending.push(values);
        pendingBytes += Buffer.byteLength(JSON.stringify(values));
        if (pending.length >= perInsert) await flush();
      }
    }
    await flush();
    await s.all('COMMIT');
    open = false;
    step.log('info', `${write.mode}: ${rows} rows into ${table.display}`);
    return { rows, bytes };
  } catch (err) {
    if (open) await s.all('ROLLBACK').catch(() => {});
    const mapped = snowflakeError(err, conn);
    // A data error may quote the offending value; keep only Snowflake's code.
    if (mapped.code === 'QUERY_FAILED' && /recognized|value/i.test(mapped.message)) {
      throw new ConnectorError(
        'QUERY_FAILED',
        `Snowflake refused a value of the input: ${mapped.message.replace(/'[^']*'/g, "'…'")}`,
      );
    }
    throw mapped;
  } finally {
    await s.close();
  }
}
