import { randomBytes } from 'node:crypto';
import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { appliedNames, dataColumns } from '../relational/changes';
import { targetType } from '../relational/column-types';
import { quoteIdent } from '../relational/identifiers';
import { type SinkPlan, signalOf, sinkPlan } from '../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../types';
import { applyPg } from './apply';
import type { PgConnection } from './connect';
import { copyIn } from './copy-in';
import { copyTextMisfit, csvMisfit, type TargetColumn } from './csv-in';
import { recordAndCommit } from './ledger';
import { passThrough } from './pass-through';
import { openPgSession, type PgSession } from './session';
import { beginWrite } from './sink-start';
import { RESTORE_SQL } from './statement-limit';

// A pipeline sink on PostgreSQL. One transaction per run, one COPY for all the rows (the
// server's statement_timeout is lifted for it and the time between two chunks bounded instead,
// see copy-in.ts, so a slow upstream never times the COPY out): insert copies straight
// into the target; upsert and replace copy into a temporary staging table and then move the
// rows by INSERT … ON CONFLICT DO UPDATE (upsert) or TRUNCATE + INSERT (replace). Committed at
// the end; any failure rolls everything back: the target is unchanged. When the input is a
// PostgreSQL source's rows whose columns line up with the target (pass-through.ts), its COPY
// bytes go in untouched instead of the decoded batches, through the same transaction, staging
// and ledger.

const q = (name: string) => quoteIdent(name, 'postgres');
/** Rows of CSV text handed to COPY at a time. */
const COPY_SLICE = 1000;

const quoted = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** A PostgreSQL array literal (for array columns): elements quoted, backslash-escaped. */
function arrayLiteral(values: unknown[]): string {
  const item = (v: unknown): string => {
    if (v === null || v === undefined) return 'NULL';
    if (Array.isArray(v)) return arrayLiteral(v);
    const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return `"${text.replace(/[\\"]/g, '\\$&')}"`;
  };
  return `{${values.map(item).join(',')}}`;
}

/** One value as a COPY CSV field: NULL is an empty unquoted field, text always quoted. */
export function copyField(v: unknown, arrayColumn: boolean): string {
  if (v === null || v === undefined) return '';
  switch (typeof v) {
    case 'string':
      return quoted(v);
    case 'number':
      return Number.isFinite(v)
        ? String(v)
        : quoted(Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity');
    case 'bigint':
      return String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      break;
  }
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? '' : quoted(v.toISOString());
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return `\\x${Buffer.from(v).toString('hex')}`;
  if (Array.isArray(v) && arrayColumn) return quoted(arrayLiteral(v));
  return quoted(JSON.stringify(v));
}

/** Keeps the primary message of a data error but drops the offending value it quotes. */
function withoutValue(err: ConnectorError): ConnectorError {
  return new ConnectorError(err.code, err.message.replace(/:\s*"(?:[^"]|"")*"(?=\s*\(SQLSTATE 22)/, ''));
}

async function targetColumns(s: PgSession, table: string): Promise<TargetColumn[]> {
  const r = await s.timed(
    s.client.query<{ name: string; type: string; oid: number; category: string }>(
      `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.atttypid::int AS oid,
              t.typcategory AS category
         FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
        WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped`,
      [table],
    ),
  );
  return r.rows.map((c) => ({
    name: c.name,
    type: c.type,
    oid: c.oid,
    array: c.category === 'A',
    category: c.category,
  }));
}

/**
 * The rows as COPY CSV, a slice at a time. Strings are always quoted (an unquoted empty field
 * is NULL); the common case, no double quote inside, skips the escaping pass.
 */
async function* csvChunks(batches: AsyncIterable<unknown[][]>, arrays: boolean[]): AsyncGenerator<Buffer> {
  const width = arrays.length;
  for await (const batch of batches) {
    for (let i = 0; i < batch.length; i += COPY_SLICE) {
      let text = '';
      const end = Math.min(batch.length, i + COPY_SLICE);
      for (let r = i; r < end; r++) {
        const row = batch[r];
        for (let j = 0; j < width; j++) {
          const v = row[j];
          if (j > 0) text += ',';
          if (v === null || v === undefined) continue;
          if (typeof v === 'string') text += v.indexOf('"') === -1 ? `"${v}"` : quoted(v);
          else if (typeof v === 'number' && Number.isFinite(v)) text += v;
          else text += copyField(v, arrays[j]);
        }
        text += '\n';
      }
      yield Buffer.from(text);
    }
  }
}

/**
 * The stream with its first chunk already in: the producer's work before it (DuckDB writing
 * the whole result) happens before COPY starts, so the copy's idle bound never counts it.
 */
async function started(chunks: AsyncIterable<Uint8Array>): Promise<AsyncIterable<Uint8Array>> {
  const it = chunks[Symbol.asyncIterator]();
  const first = await it.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    for (;;) {
      const next = await it.next();
      if (next.done) return;
      yield next.value;
    }
  })();
}

/** The statement that moves the staged rows into the target. */
function mergeSql(plan: SinkPlan, stage: string): string {
  const cols = plan.names.map(q).join(', ');
  const target = plan.table.sql;
  if (plan.write.mode === 'replace')
    return `INSERT INTO ${target} (${cols}) SELECT ${cols} FROM ${stage} ORDER BY ctid`;
  const key = (plan.write.key ?? []).map(q).join(', ');
  const rest = plan.names.filter((n) => !plan.write.key?.includes(n));
  const update =
    rest.length > 0
      ? `DO UPDATE SET ${rest.map((n) => `${q(n)} = EXCLUDED.${q(n)}`).join(', ')}`
      : 'DO NOTHING';
  // Within one run the last row of a key wins (ON CONFLICT cannot touch a row twice).
  return `INSERT INTO ${target} (${cols})
    SELECT DISTINCT ON (${key}) ${cols} FROM ${stage} ORDER BY ${key}, ctid DESC
    ON CONFLICT (${key}) ${update}`;
}

export async function writePg(
  conn: PgConnection,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  const plan = await sinkPlan(input, step, ctx, 'postgres');
  const { write, table, names } = plan;
  const s = await openPgSession(conn, ctx, signalOf(step, ctx));
  let rows = 0;
  let bytes = 0;
  try {
    // insert goes from this message to its COPY: lifted for it here (sink-start.ts).
    const start = await beginWrite(s, table, ctx.commitKey, { lift: write.mode === 'insert' });
    if (!start.exists && start.liftedFrom !== undefined) {
      await s.timed(s.client.query(RESTORE_SQL, [start.liftedFrom]));
      start.liftedFrom = undefined;
    }
    if (!start.exists) {
      if (!write.create_table) {
        throw new ConnectorError(
          'QUERY_FAILED',
          `table ${table.display} does not exist; set create_table to create it`,
        );
      }
      if (names.length === 0) {
        step.log('info', `no input rows: table ${table.display} was not created`);
        await s.timed(s.client.query('ROLLBACK'));
        return { rows: 0, bytes: 0 };
      }
      const key = new Set(write.key ?? []);
      // apply: the table's columns only, never the change metadata.
      const columns = write.mode === 'apply' ? dataColumns(plan.rows.columns) : plan.rows.columns;
      const defs = columns.map(
        (c) => `${q(c.name)} ${targetType(c.type, 'postgres')}${key.has(c.name) ? ' NOT NULL' : ''}`,
      );
      if (key.size > 0) defs.push(`PRIMARY KEY (${[...key].map(q).join(', ')})`);
      await s.timed(s.client.query(`CREATE TABLE IF NOT EXISTS ${table.sql} (${defs.join(', ')})`));
      step.log('info', `created table ${table.display}`);
    }
    const { earlier } = start;
    if (earlier) {
      await s.timed(s.client.query('ROLLBACK'));
      step.log(
        'info',
        `an earlier attempt of this run already committed ${earlier.rows} rows into ${table.display}`,
      );
      return earlier;
    }
    const target = start.exists ? start.columns : await targetColumns(s, table.sql);
    const byName = new Map(target.map((c) => [c.name, c]));
    // apply writes the table's columns, and kept metadata columns the target has.
    const written = write.mode === 'apply' ? appliedNames(names, (n) => byName.has(n)) : names;
    const missing = written.find((n) => !byName.has(n));
    if (missing !== undefined) {
      throw new ConnectorError(
        'QUERY_FAILED',
        `column ${JSON.stringify(missing)} is not in table ${table.display}`,
      );
    }
    if (write.mode === 'apply') {
      const idle = conn.config.statement_timeout_seconds * 1000;
      const done = await applyPg(s, plan, written, byName, step, idle, csvChunks);
      await recordAndCommit(s, table, ctx.commitKey, done);
      return done;
    }
    const arrays = names.map((n) => byName.get(n)!.array);
    const cols = names.map(q).join(', ');
    // insert: COPY straight into the target, as atomic in this transaction and half the writes.
    // upsert and replace load a staging table first: ON CONFLICT needs a SELECT to read from,
    // and replace empties the target (an exclusive lock) only once every row has arrived.
    const direct = write.mode === 'insert';
    const stage = direct ? table.sql : q(`sluice_stage_${randomBytes(6).toString('hex')}`);
    if (!direct) {
      // The staging table has the target's column types, so COPY already checks every value.
      await s.timed(
        s.client.query(
          `CREATE TEMPORARY TABLE ${stage} ON COMMIT DROP AS SELECT ${cols} FROM ${table.sql} WITH NO DATA`,
        ),
      );
    }
    const format = passThrough(plan.rows, names, byName);
    const csv = plan.rows.csv;
    const textual = csv?.format === 'text';
    const misfit =
      csv && names.length > 0
        ? (textual ? copyTextMisfit : csvMisfit)(
            plan.rows.columns,
            names.map((n) => byName.get(n)!),
          )
        : null;
    // One COPY for all the rows, bounded by the time between two chunks. Insert commits next:
    // the statement limit is set back with the ledger's row and COMMIT, in one round trip.
    let limit = start.liftedFrom;
    const copyAll = async (
      kind: 'binary' | 'text' | 'csv',
      chunks: AsyncIterable<Uint8Array>,
      framed = false,
    ) => {
      const r = await copyIn(s.client, {
        table: stage,
        columns: names,
        format: { kind },
        chunks,
        idleTimeoutMs: conn.config.statement_timeout_seconds * 1000,
        framed,
        keepLifted: direct,
        liftedFrom: start.liftedFrom,
      });
      limit = r.lifted;
      return r;
    };
    let done = { rows: 0, bytes: 0 };
    if (names.length === 0) {
      for await (const _ of plan.rows.batches);
    } else if (format) {
      // COPY's bytes from a PostgreSQL source, untouched.
      step.log('info', `pass-through: the source's COPY output goes in unchanged (${format})`);
      // Asked framed: the source's CopyData messages go onto this socket, each chunk's as one message.
      const native = plan.rows.native!.open(format, { framed: true });
      done = await copyAll(format, native.chunks, native.framed === true);
    } else if (csv && misfit === null && textual) {
      // The source writes its rows as COPY input: binary for the target's types where it can
      // (the server then parses no text), else text; they go into the COPY as they are.
      const notBinary = csv.asBinary
        ? csv.asBinary(names.map((n) => ({ oid: byName.get(n)!.oid, name: byName.get(n)!.type })))
        : 'the source writes no COPY binary';
      if (notBinary !== null) step.log('info', `the source's rows stay COPY text: ${notBinary}`);
      const kind = notBinary === null ? 'binary' : 'text';
      done = await copyAll(kind, await started(csv.chunks));
      step.log('info', `COPY read the source's rows as COPY ${kind} directly (${done.rows} rows)`);
    } else if (csv && misfit === null) {
      // The transform wrote the rows as CSV: they go into the COPY as they are.
      done = await copyAll('csv', await started(csv.chunks));
      step.log('info', `COPY read the transform's CSV directly (${done.rows} rows)`);
    } else {
      if (csv && misfit) step.log('info', `rows go to COPY one by one: ${misfit}`);
      // The server parses a slice while the next one is encoded.
      done = await copyAll('csv', csvChunks(plan.rows.batches, arrays));
    }
    rows = done.rows;
    bytes = done.bytes;
    if (write.mode === 'replace') await s.timed(s.client.query(`TRUNCATE TABLE ${table.sql}`));
    if (!direct && rows > 0) await s.timed(s.client.query(mergeSql(plan, stage)));
    await recordAndCommit(s, table, ctx.commitKey, { rows, bytes }, limit);
    step.log('info', `${write.mode}: ${rows} rows into ${table.display}`);
    return { rows, bytes };
  } catch (err) {
    await s.timed(s.client.query('ROLLBACK')).catch(() => {});
    const mapped = s.error(err);
    throw mapped.code === 'QUERY_FAILED' ? withoutValue(mapped) : mapped;
  } finally {
    await s.close();
  }
}
