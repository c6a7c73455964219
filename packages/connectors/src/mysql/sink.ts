import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { appliedNames, dataColumns } from '../relational/changes';
import { targetType } from '../relational/column-types';
import { isTemporalColumn, utcDatetime } from '../relational/datetime';
import { quoteIdent } from '../relational/identifiers';
import { type SinkPlan, signalOf, sinkPlan } from '../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../types';
import { applyMysql } from './apply';
import { type MysqlConnection, queryMysql } from './connect';
import { committedWrite, ensureLedger, recordWrite } from './ledger';
import { type MysqlSession, openMysqlSession } from './session';
import { bindable, sizeOf } from './values';

// A pipeline sink on MySQL/MariaDB: multi-row INSERTs as prepared statements with bound
// values (about 1,000 rows each, fewer when the rows are large, always under
// max_allowed_packet), upsert through ON DUPLICATE KEY UPDATE, replace as DELETE + INSERT,
// all in one transaction (InnoDB) committed at the end. A created table exists from the
// start: MySQL commits DDL implicitly, so it is created before the transaction begins.

const q = (name: string) => quoteIdent(name, 'mysql');
const ROWS_PER_INSERT = 1000;
/** A prepared statement takes at most 65,535 parameters. */
const MAX_PARAMS = 65_535;

/** Keeps the server's message but drops the values it quotes ("Duplicate entry '7' …"). */
function withoutValues(err: ConnectorError): ConnectorError {
  if (err.code !== 'QUERY_FAILED') return err;
  return new ConnectorError(err.code, err.message.replace(/\b(value|entry):? '(?:[^'\\]|\\.|'')*'/gi, '$1'));
}

function insertSql(plan: SinkPlan, rows: number): string {
  const cols = plan.names.map(q).join(', ');
  const tuple = `(${plan.names.map(() => '?').join(', ')})`;
  let sql = `INSERT INTO ${plan.table.sql} (${cols}) VALUES ${Array.from({ length: rows }, () => tuple).join(', ')}`;
  if (plan.write.mode === 'upsert') {
    const key = new Set(plan.write.key ?? []);
    const rest = plan.names.filter((n) => !key.has(n));
    // VALUES() works on MariaDB and MySQL 8 (which also knows row aliases, MariaDB does not).
    const set =
      rest.length > 0
        ? rest.map((n) => `${q(n)} = VALUES(${q(n)})`)
        : [`${q([...key][0])} = ${q([...key][0])}`];
    sql += ` ON DUPLICATE KEY UPDATE ${set.join(', ')}`;
  }
  return sql;
}

async function tableExists(s: MysqlSession, plan: SinkPlan): Promise<boolean> {
  const rows = await s.execute<{ n: number }[]>(
    'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
    [plan.table.schema, plan.table.name],
  );
  return Number(rows[0].n) > 0;
}

/** The table's columns, lower-cased, with their DATA_TYPE. */
async function targetColumns(s: MysqlSession, plan: SinkPlan): Promise<Map<string, string>> {
  const rows = await s.execute<{ name: string; type: string }[]>(
    'SELECT COLUMN_NAME AS name, DATA_TYPE AS type FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
    [plan.table.schema, plan.table.name],
  );
  return new Map(rows.map((r) => [String(r.name).toLowerCase(), String(r.type)]));
}

export async function writeMysql(
  conn: MysqlConnection,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  const plan = await sinkPlan(input, step, ctx, 'mysql');
  const { write, table, names } = plan;
  const s = await openMysqlSession(conn, ctx, signalOf(step, ctx));
  let rows = 0;
  let bytes = 0;
  let open = false;
  try {
    if (!(await tableExists(s, plan))) {
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
      const key = new Set(write.key ?? []);
      // apply: the table's columns only, never the change metadata.
      const columns = write.mode === 'apply' ? dataColumns(plan.rows.columns) : plan.rows.columns;
      const defs = columns.map(
        (c) =>
          `${q(c.name)} ${targetType(c.type, 'mysql', key.has(c.name))}${key.has(c.name) ? ' NOT NULL' : ''}`,
      );
      if (key.size > 0) defs.push(`PRIMARY KEY (${[...key].map(q).join(', ')})`);
      await s.execute(`CREATE TABLE IF NOT EXISTS ${table.sql} (${defs.join(', ')}) ENGINE=InnoDB`, []);
      step.log('info', `created table ${table.display}`);
    }
    const existing = await targetColumns(s, plan);
    // apply writes the table's columns, and kept metadata columns the target has.
    const written =
      write.mode === 'apply' ? appliedNames(names, (n) => existing.has(n.toLowerCase())) : names;
    const missing = written.find((n) => !existing.has(n.toLowerCase()));
    if (missing !== undefined) {
      throw new ConnectorError(
        'QUERY_FAILED',
        `column ${JSON.stringify(missing)} is not in table ${table.display}`,
      );
    }
    // Zoned timestamp text into DATETIME/TIMESTAMP columns is stored as its UTC instant.
    const temporal = written.map((n) => isTemporalColumn(existing.get(n.toLowerCase()) ?? ''));
    await s.timed(queryMysql(s.connection, "SET time_zone = '+00:00'"));
    const [{ packet }] = await s.execute<{ packet: number }[]>('SELECT @@max_allowed_packet AS packet', []);
    const byteBudget = Math.max(64 * 1024, Math.min(Number(packet) / 2, 8 * 1024 * 1024));
    const perInsert = Math.max(
      1,
      Math.min(ROWS_PER_INSERT, Math.floor(MAX_PARAMS / Math.max(1, names.length))),
    );
    const full = insertSql(plan, perInsert);

    if (ctx.commitKey) await ensureLedger(s, table);
    await s.timed(queryMysql(s.connection, 'START TRANSACTION'));
    open = true;
    const earlier = ctx.commitKey ? await committedWrite(s, table, ctx.commitKey) : null;
    if (earlier) {
      await s.timed(queryMysql(s.connection, 'ROLLBACK'));
      open = false;
      step.log(
        'info',
        `an earlier attempt of this run already committed ${earlier.rows} rows into ${table.display}`,
      );
      return earlier;
    }
    if (write.mode === 'apply') {
      const done = await applyMysql(s, plan, written, step, { temporal, byteBudget });
      if (ctx.commitKey) await recordWrite(s, table, ctx.commitKey, done);
      await s.timed(queryMysql(s.connection, 'COMMIT'));
      open = false;
      return done;
    }
    if (write.mode === 'replace') await s.execute(`DELETE FROM ${table.sql}`, []);
    let pending: unknown[] = [];
    let pendingRows = 0;
    let pendingBytes = 0;
    const flush = async () => {
      if (pendingRows === 0) return;
      const sql = pendingRows === perInsert ? full : insertSql(plan, pendingRows);
      await s.execute(sql, pending);
      // Odd-sized statements are not reused: keep the session's statement cache small.
      if (sql !== full) s.connection.unprepare(sql);
      rows += pendingRows;
      bytes += pendingBytes;
      pending = [];
      pendingRows = 0;
      pendingBytes = 0;
    };
    for await (const batch of plan.rows.batches) {
      if (names.length === 0) continue;
      for (const row of batch) {
        for (let i = 0; i < row.length; i++) {
          const v = row[i];
          const b = temporal[i] && typeof v === 'string' ? utcDatetime(v) : bindable(v);
          pending.push(b);
          pendingBytes += sizeOf(b);
        }
        pendingRows++;
        if (pendingRows >= perInsert || pendingBytes >= byteBudget) await flush();
      }
    }
    await flush();
    if (ctx.commitKey) await recordWrite(s, table, ctx.commitKey, { rows, bytes });
    await s.timed(queryMysql(s.connection, 'COMMIT'));
    open = false;
    step.log('info', `${write.mode}: ${rows} rows into ${table.display}`);
    return { rows, bytes };
  } catch (err) {
    if (open) await s.timed(queryMysql(s.connection, 'ROLLBACK')).catch(() => {});
    throw withoutValues(s.error(err));
  } finally {
    await s.close();
  }
}
