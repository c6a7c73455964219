import { closeSync, constants, createReadStream, openSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import { namedPipes } from './fifos';

// A transform's result written by DuckDB itself as CSV in the dialect PostgreSQL's COPY reads
// (no header, `,`, NULL an unquoted empty field, text always quoted so an empty string and a
// lone `\.` stay text, nested values as JSON, timestamps with their zone), so a SQL sink can
// stream it into COPY without a row passing through JavaScript. Only column types whose CSV
// text means the same to PostgreSQL as the values the row path writes take this way.

type Duck = typeof import('@duckdb/node-api');

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** How a column is written: as it is, quoted as text, as JSON, or not at all (null). */
function columnExpr(d: Duck, type: DuckDBType, col: string): { expr: string; text: boolean } | null {
  const T = d.DuckDBTypeId;
  switch (type.typeId) {
    case T.BOOLEAN:
    case T.TINYINT:
    case T.SMALLINT:
    case T.INTEGER:
    case T.BIGINT:
    case T.UTINYINT:
    case T.USMALLINT:
    case T.UINTEGER:
    case T.UBIGINT:
    case T.HUGEINT:
    case T.UHUGEINT:
    case T.FLOAT:
    case T.DOUBLE:
    case T.DECIMAL:
    case T.DATE:
    case T.TIME:
    case T.TIMESTAMP_TZ:
      return { expr: col, text: false };
    case T.TIMESTAMP:
      // The row path writes these as UTC instants; with a zone the target's own TimeZone
      // setting cannot shift them. A TIMESTAMPTZ's text (the session is in UTC) is the
      // timestamp's own text and `+00`, infinities without it: spelled out so, DuckDB writes it
      // ~60 ms of CPU per 300,000 rows faster than it formats the TIMESTAMPTZ (a third of the
      // CSV's cost in docs/benchmarks.md's bench).
      return {
        expr: `CASE WHEN isfinite(${col}) THEN CAST(${col} AS VARCHAR) || '+00' ELSE CAST(${col} AS VARCHAR) END`,
        text: false,
      };
    case T.TIMESTAMP_S:
    case T.TIMESTAMP_MS:
    case T.TIMESTAMP_NS:
      return { expr: `CAST(${col} AS TIMESTAMPTZ)`, text: false };
    case T.VARCHAR:
    case T.UUID:
    case T.ENUM:
      return { expr: `CAST(${col} AS VARCHAR)`, text: true };
    case T.STRUCT:
    case T.LIST:
    case T.MAP:
    case T.ARRAY:
      return { expr: `CAST(to_json(${col}) AS VARCHAR)`, text: true };
    default:
      return null;
  }
}

export type CsvExport = {
  select: string;
  /** Aliases of the columns written as quoted text. */
  names: string[];
  /** The result's columns, named as a streamed result names them (`a`, `a:1` for a repeat). */
  columns: { name: string; type: string }[];
};

/**
 * The SELECT that writes the result of `sql` as COPY CSV, or the reason it cannot: a column
 * type without a faithful CSV form, or SQL that is no plain query.
 */
export async function csvExport(
  d: Duck,
  conn: DuckDBConnection,
  sql: string,
): Promise<CsvExport | { reason: string }> {
  let prepared: Awaited<ReturnType<DuckDBConnection['prepare']>>;
  try {
    prepared = await conn.prepare(sql);
  } catch (err) {
    return { reason: `the SQL does not prepare on its own (${(err as Error).message.split('\n')[0]})` };
  }
  try {
    if (prepared.statementType !== d.StatementType.SELECT) return { reason: 'the SQL is not a SELECT' };
    if (prepared.parameterCount > 0) return { reason: 'the SQL has template parameters' };
    const alias = Array.from({ length: prepared.columnCount }, (_, i) => `c${i}`);
    const exprs: string[] = [];
    const quoted: string[] = [];
    for (let i = 0; i < prepared.columnCount; i++) {
      const type = prepared.columnType(i);
      const e = columnExpr(d, type, ident(alias[i]));
      if (!e) return { reason: `column ${prepared.columnName(i)} is ${type}, which goes row by row` };
      exprs.push(`${e.expr} AS ${ident(alias[i])}`);
      if (e.text) quoted.push(ident(alias[i]));
    }
    if (exprs.length === 0) return { reason: 'the result has no columns' };
    // The user's SQL on lines of its own: a trailing comment cannot swallow the wrapper.
    const inner = sql.replace(/;\s*$/, '');
    const select = `SELECT ${exprs.join(', ')} FROM (\n${inner}\n) AS q(${alias.map(ident).join(', ')})`;
    try {
      (await conn.prepare(select)).destroySync();
    } catch (err) {
      return { reason: `the SQL cannot be wrapped for COPY (${(err as Error).message.split('\n')[0]})` };
    }
    const seen = new Map<string, number>();
    const columns = Array.from({ length: prepared.columnCount }, (_, i) => {
      const name = prepared.columnName(i);
      const n = (seen.get(name) ?? 0) + 1;
      seen.set(name, n);
      return { name: n > 1 ? `${name}:${n - 1}` : name, type: String(prepared.columnType(i)) };
    });
    return { select, names: quoted, columns };
  } finally {
    prepared.destroySync();
  }
}

/** The named pipe the result's CSV goes through (`csvOutput`), or null without mkfifo. */
export const resultPipe = async (path: string) => (await namedPipes([`${path}.pipe`]))?.[0] ?? null;

/** Runs the export into `file`; resolves with the rows written. */
async function writeCsv(
  conn: DuckDBConnection,
  exp: CsvExport,
  file: string,
  tmpFile: boolean,
): Promise<number> {
  const literal = `'${file.replace(/'/g, "''")}'`;
  const force = exp.names.length > 0 ? `, FORCE_QUOTE (${exp.names.join(', ')})` : '';
  const r = await conn.runAndReadAll(
    `COPY (${exp.select}) TO ${literal} (FORMAT csv, HEADER false, DELIMITER ',', QUOTE '"', ESCAPE '"', NULL ''${force}, USE_TMP_FILE ${tmpFile})`,
  );
  return Number(r.getRows()[0]?.[0] ?? 0);
}

/**
 * The export's bytes while DuckDB writes them: through a named pipe beside `path` where the
 * system has mkfifo (the consumer reads as DuckDB writes), else through the file `path`, read
 * once it is written. `rows` settles once DuckDB finished; a failure there is the stream's failure.
 */
export async function csvOutput(
  conn: DuckDBConnection,
  exp: CsvExport,
  path: string,
  track: <T>(p: Promise<T>) => Promise<T>,
  /** `resultPipe(path)`, made ahead (off the way of the result's first bytes). */
  made?: Promise<string | null>,
): Promise<{ chunks: AsyncIterable<Uint8Array>; rows: Promise<number>; piped: boolean }> {
  await rm(path, { force: true });
  const pipe = await (made ?? resultPipe(path));
  const piped = pipe !== null;
  if (pipe === null) {
    const rows = await track(writeCsv(conn, exp, path, false));
    return { chunks: createReadStream(path), rows: Promise.resolve(rows), piped };
  }
  // Read as a socket (the event loop polls the pipe), not as a file stream: a file stream's
  // every 64 KiB read is a turn through the thread pool (docs/benchmarks.md, "a transform's
  // pipes made ahead"). Opened without blocking, before DuckDB opens its end: a blocking open
  // would wait in one of libuv's four pool threads, which DuckDB's own calls need too
  // (`fifo-opens.test.ts`). Until a writer has come and gone, the pipe reads as empty, not ended.
  const stream = new net.Socket({
    fd: openSync(pipe, constants.O_RDONLY | constants.O_NONBLOCK),
    readable: true,
    writable: false,
  });
  const rows = track(writeCsv(conn, exp, pipe, false));
  // DuckDB failing before it opened the pipe would leave our reader waiting for a writer:
  // open and close it as the writer, so the reader sees the end and the failure follows
  // (nothing to do once the reader has gone: ENXIO).
  rows.catch(() => {
    try {
      closeSync(openSync(pipe, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {}
  });
  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of stream) yield chunk as Buffer;
    } finally {
      stream.destroy();
    }
    // The pipe also ends when DuckDB stops halfway; only its result says it is complete.
    await rows;
  }
  return { chunks: chunks(), rows, piped };
}
