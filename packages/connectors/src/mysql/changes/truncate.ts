// TRUNCATE in the binlog (docs/connectors/mysql.md "Change rows"): MySQL and MariaDB log it as
// a statement (a QUERY event), never as rows, whatever binlog_format says. The statement is
// read for the one table it names (`TRUNCATE [TABLE] [db.]t [WAIT n | NOWAIT]`), the database
// defaulting to the event's current one.

const IDENT = '(?:`((?:[^`]|``)+)`|([A-Za-z0-9_$\\u0080-\\uffff]+))';
const STATEMENT = new RegExp(
  `^TRUNCATE\\s+(?:TABLE\\s+)?${IDENT}(?:\\s*\\.\\s*${IDENT})?(?:\\s+(?:WAIT\\s+\\d+|NOWAIT))?\\s*;?\\s*$`,
  'i',
);

/** Leading comments and whitespace (`/* … *\/`, `-- …`, `# …`) off a statement. */
function withoutLeadingComments(query: string): string {
  let q = query.trimStart();
  for (;;) {
    if (q.startsWith('/*')) {
      const end = q.indexOf('*/');
      if (end < 0) return q;
      q = q.slice(end + 2).trimStart();
    } else if (q.startsWith('--') || q.startsWith('#')) {
      const end = q.indexOf('\n');
      if (end < 0) return '';
      q = q.slice(end + 1).trimStart();
    } else {
      return q;
    }
  }
}

const unquote = (quoted: string | undefined, bare: string | undefined) =>
  quoted !== undefined ? quoted.replace(/``/g, '`') : (bare as string);

/** The table a binlog statement truncates, or null when it is not a TRUNCATE. */
export function truncatedTable(query: string, schema: string): { database: string; table: string } | null {
  const m = STATEMENT.exec(withoutLeadingComments(query));
  if (!m) return null;
  const first = unquote(m[1], m[2]);
  if (m[3] === undefined && m[4] === undefined) return { database: schema, table: first };
  return { database: first, table: unquote(m[3], m[4]) };
}
