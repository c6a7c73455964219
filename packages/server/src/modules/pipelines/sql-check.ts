import { type DuckHost, DuckHostError, duckHost } from '../../duck-host/client';

// Transform SQL is parsed, not run, at validation time: DuckDB's own parser (the engine runs
// transforms in DuckDB) through json_serialize_sql, on an empty in-memory database. Parsing
// needs no tables, so the upstream step names need not exist. DuckDB runs in a child process of
// its own (duck-host/client.ts), started on first use.

export type SqlCheck =
  | { ok: true }
  | { ok: false; message: string }
  /** Not checked: DuckDB is not installed (`unavailable`), or its process stopped on this SQL. */
  | { ok: null; unavailable: boolean; message: string };

/** Whether `sql` is exactly one statement DuckDB parses. */
export async function checkSql(sql: string, host: DuckHost = duckHost()): Promise<SqlCheck> {
  let text: string;
  try {
    text = await host.serialize(sql);
  } catch (err) {
    if (!(err instanceof DuckHostError) || err.code === 'FAILED') throw err;
    return { ok: null, unavailable: err.code === 'UNAVAILABLE', message: err.message };
  }
  const out = JSON.parse(text) as { error: boolean; error_message?: string; statements?: unknown[] };
  if (out.error) return { ok: false, message: out.error_message ?? 'the SQL does not parse' };
  if ((out.statements ?? []).length !== 1)
    return { ok: false, message: 'a transform is exactly one SELECT query' };
  return { ok: true };
}

const TEMPLATE = /\{\{\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}\}/g;

/** Templates become NULL for parsing: a value in any expression position, or text in a literal. */
export const withoutTemplates = (sql: string) => sql.replace(TEMPLATE, 'NULL');
