import { ConnectorError } from '../types';
import type { Dialect } from './placeholders';

// Names that pipeline sinks put into SQL text: the target table (from the spec) and column
// names (from the payload). Tables are validated strictly; columns may be anything a source
// produced, so they are quoted, and only what quoting cannot carry is refused.

const TABLE_PART = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** PostgreSQL truncates longer names (so two columns could collide); MySQL refuses them. */
const MAX_NAME = { postgres: 63, mysql: 64 } as const;

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

/** Quotes one identifier: double quotes (PostgreSQL) or backticks (MySQL), embedded ones doubled. */
export function quoteIdent(name: string, dialect: Dialect): string {
  const q = dialect === 'postgres' ? '"' : '`';
  return `${q}${name.split(q).join(q + q)}${q}`;
}

export type TableName = {
  schema: string | null;
  name: string;
  /** Quoted for SQL text. */
  sql: string;
  /** As the user wrote it, for messages. */
  display: string;
};

/**
 * `table` or `schema.table` (MySQL: `database.table`), each part letters, digits and
 * underscores, not starting with a digit. Anything else (quotes, spaces, semicolons,
 * comments) is refused rather than escaped: a table name never needs them.
 */
export function parseTableName(table: string, dialect: Dialect): TableName {
  const parts = table.split('.');
  const max = MAX_NAME[dialect];
  if (parts.length > 2 || parts.some((p) => !TABLE_PART.test(p) || p.length > max)) {
    throw invalid(
      `table ${JSON.stringify(table.slice(0, 200))} is not a valid name: use table or schema.table with letters, digits and _ (at most ${max} characters each)`,
    );
  }
  const [schema, name] = parts.length === 2 ? parts : [null, parts[0]];
  return {
    schema,
    name,
    sql: parts.map((p) => quoteIdent(p, dialect)).join('.'),
    display: table,
  };
}

/** A column name from a payload: any text the database can carry as a quoted identifier. */
export function checkColumnName(name: string, dialect: Dialect): string {
  const bytes = Buffer.byteLength(name);
  if (name.length === 0 || bytes > MAX_NAME[dialect] || name.includes('\0')) {
    throw invalid(
      `column name ${JSON.stringify(name.slice(0, 80))} cannot be used: names are 1 to ${MAX_NAME[dialect]} bytes without NUL characters`,
    );
  }
  if (dialect === 'mysql' && / $/.test(name)) {
    throw invalid(`column name ${JSON.stringify(name)} cannot end with a space in MySQL`);
  }
  return name;
}

/** Checks every column and the key; the key must name payload columns. */
export function checkColumns(columns: string[], key: string[] | undefined, dialect: Dialect): void {
  const seen = new Set<string>();
  for (const c of columns) {
    checkColumnName(c, dialect);
    const folded = dialect === 'mysql' ? c.toLowerCase() : c;
    if (seen.has(folded)) throw invalid(`the input has two columns named ${JSON.stringify(c)}`);
    seen.add(folded);
  }
  for (const k of key ?? []) {
    if (!columns.includes(k)) {
      throw invalid(`key column ${JSON.stringify(k)} is not a column of the input`);
    }
  }
}
