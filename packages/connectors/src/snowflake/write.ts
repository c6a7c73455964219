import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { familyOf, type TypeFamily } from '../relational/column-types';
import { signalOf, sinkPlan } from '../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../types';
import { openSnowflake, type SnowflakeConnection, snowflakeError } from './connect';

// A pipeline sink on Snowflake: batched INSERTs with array binding (one statement, many rows of
// bound values; never a value in the SQL text) inside one transaction, committed at the end.
// `replace` deletes the rows first in the same transaction. A created table is created before
// the transaction (Snowflake commits DDL implicitly). Upsert (MERGE) is not offered yet.

const MAX_ROWS_PER_INSERT = 5000;
/** Bound values per statement: keeps a request body well under Snowflake's size limits. */
const MAX_VALUES_PER_INSERT = 100_000;

const SIMPLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

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
  if (write.mode === 'upsert') {
    throw new ConnectorError(
      'UNSUPPORTED_OPERATION',
      'the Snowflake sink writes with mode insert or replace; upsert is not supported yet',
    );
  }
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
    const perInsert = Math.max(
      1,
      Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_VALUES_PER_INSERT / Math.max(1, names.length))),
    );
    const insert = `INSERT INTO ${tableSql} (${targets.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;

    await s.all('BEGIN');
    open = true;
    if (write.mode === 'replace') await s.all(`DELETE FROM ${tableSql}`);
    let pending: unknown[][] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pending.length === 0) return;
      await s.all(insert, pending);
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
