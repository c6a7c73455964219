// Transform SQL is parsed, not run, at validation time: DuckDB's own parser (the engine runs
// transforms in DuckDB) through json_serialize_sql, on an empty in-memory database. Parsing
// needs no tables, so the upstream step names need not exist. DuckDB is a native module loaded
// on first use only.

type Parser = (sql: string) => Promise<{ ok: true } | { ok: false; message: string }>;

let parser: Promise<Parser | null> | null = null;

async function openParser(): Promise<Parser | null> {
  let duckdb: typeof import('@duckdb/node-api');
  try {
    duckdb = await import('@duckdb/node-api');
  } catch {
    return null;
  }
  const instance = await duckdb.DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  return async (sql) => {
    const conn = await instance.connect();
    try {
      const reader = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS j', [sql]);
      const out = JSON.parse(String(reader.getRows()[0][0])) as {
        error: boolean;
        error_message?: string;
        statements?: unknown[];
      };
      if (out.error) return { ok: false, message: out.error_message ?? 'the SQL does not parse' };
      if ((out.statements ?? []).length !== 1)
        return { ok: false, message: 'a transform is exactly one SELECT query' };
      return { ok: true };
    } finally {
      conn.closeSync();
    }
  };
}

/** The parser, or null when DuckDB is not installed (validation then warns SQL_NOT_CHECKED). */
export function sqlParser(): Promise<Parser | null> {
  parser ??= openParser().catch(() => null);
  return parser;
}

const TEMPLATE = /\{\{\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}\}/g;

/** Templates become NULL for parsing: a value in any expression position, or text in a literal. */
export const withoutTemplates = (sql: string) => sql.replace(TEMPLATE, 'NULL');
