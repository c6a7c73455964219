import { ConnectorError } from '../types';

// `{{name}}` placeholders of a saved SQL statement become bound parameters ($n for
// PostgreSQL, ? for MySQL prepared statements). The statement text never receives a value:
// this lexer only finds placeholders outside quotes and comments, rejects markers the driver
// would treat as parameters of its own, and rejects quoted placeholders (they would be read as
// literal text by the server, which is never what the author meant).

export type Dialect = 'postgres' | 'mysql';

export type CompiledStatement = {
  text: string;
  /** Values in binding order (one per marker; MySQL repeats a name's value per occurrence). */
  values: unknown[];
  /** Distinct placeholder names in order of first use. */
  names: string[];
};

const PLACEHOLDER = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/;
/** Pipeline templates also name scopes: `{{runtime.incremental.lower_bound.cursor}}`. */
const DOTTED = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/;
const ANY_BRACES = /^\{\{[^}]*\}\}/;

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

type Token = { kind: 'code'; text: string } | { kind: 'placeholder'; name: string };

function quotedEnd(sql: string, start: number, quote: string, backslashes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashes && c === '\\') {
      i += 2;
      continue;
    }
    if (c === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return sql.length;
}

function blockCommentEnd(sql: string, start: number, nested: boolean): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth = nested ? depth + 1 : 1;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return sql.length;
}

function checkQuoted(segment: string, dotted: boolean) {
  const m = (
    dotted ? /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/ : /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/
  ).exec(segment);
  if (m) {
    throw invalid(
      `placeholder {{${m[1]}}} is inside quotes; write it without quotes, it is sent as a bound value`,
    );
  }
}

const identChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$]/.test(c);

function tokenize(sql: string, dialect: Dialect, dotted = false): Token[] {
  const placeholder = dotted ? DOTTED : PLACEHOLDER;
  const tokens: Token[] = [];
  let code = '';
  const flush = () => {
    if (code) tokens.push({ kind: 'code', text: code });
    code = '';
  };
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    const rest = sql.slice(i, i + 2);
    let end = -1;
    let quoted = false;
    if (c === "'") {
      // PostgreSQL reads backslashes literally unless the string is E'…'.
      const backslashes = dialect === 'mysql' || (/[eE]/.test(sql[i - 1] ?? '') && !identChar(sql[i - 2]));
      end = quotedEnd(sql, i, "'", backslashes);
      quoted = true;
    } else if (c === '"') {
      end = quotedEnd(sql, i, '"', dialect === 'mysql');
      quoted = true;
    } else if (c === '`' && dialect === 'mysql') {
      end = quotedEnd(sql, i, '`', false);
      quoted = true;
    } else if (rest === '--' && (dialect === 'postgres' || /[\s]/.test(sql[i + 2] ?? ' '))) {
      const nl = sql.indexOf('\n', i);
      end = nl === -1 ? sql.length : nl;
    } else if (c === '#' && dialect === 'mysql') {
      const nl = sql.indexOf('\n', i);
      end = nl === -1 ? sql.length : nl;
    } else if (rest === '/*' && !(dialect === 'mysql' && /[!+]/.test(sql[i + 2] ?? ''))) {
      // MySQL runs the body of /*! … */ and reads /*+ … */ hints, so those stay code.
      end = blockCommentEnd(sql, i, dialect === 'postgres');
    } else if (c === '$' && dialect === 'postgres') {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
      if (tag && !identChar(sql[i - 1])) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        end = close === -1 ? sql.length : close + tag[0].length;
        quoted = true;
      } else if (/^\$\d/.test(sql.slice(i)) && !identChar(sql[i - 1])) {
        throw invalid('positional parameters such as $1 are not allowed; use {{name}} placeholders');
      }
    } else if (c === '?' && dialect === 'mysql') {
      throw invalid('? parameter markers are not allowed; use {{name}} placeholders');
    } else if (rest === '{{') {
      const m = placeholder.exec(sql.slice(i));
      if (!m) {
        const bad = ANY_BRACES.exec(sql.slice(i));
        throw invalid(
          `${bad ? bad[0] : '{{'} is not a valid placeholder; names use letters, digits and _ (for example {{customer_id}})`,
        );
      }
      flush();
      tokens.push({ kind: 'placeholder', name: m[1] });
      i += m[0].length;
      continue;
    }
    if (end === -1) {
      code += c;
      i++;
      continue;
    }
    const segment = sql.slice(i, end);
    if (quoted) checkQuoted(segment, dotted);
    code += segment;
    i = end;
  }
  flush();
  return tokens;
}

/** The placeholder names of a statement; throws INVALID_STATEMENT on a malformed one. */
export function placeholderNames(sql: string, dialect: Dialect): string[] {
  const names: string[] = [];
  for (const t of tokenize(sql, dialect))
    if (t.kind === 'placeholder' && !names.includes(t.name)) names.push(t.name);
  return names;
}

/**
 * A value as the driver binds it: scalars as they are, objects and arrays as JSON text (so
 * the driver never turns an array into an SQL array literal or an object into something else).
 */
export function bindValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'object') return JSON.stringify(value);
  return value;
}

export function compileStatement(
  sql: string,
  parameters: Record<string, unknown>,
  dialect: Dialect,
): CompiledStatement {
  return compile(tokenize(sql, dialect), dialect, (name) => {
    if (!Object.hasOwn(parameters, name)) {
      throw invalid(`parameter ${name} has no value; pass it in parameters`);
    }
    return parameters[name];
  });
}

/**
 * A pipeline step's SQL: `{{a.b.c}}` templates become bound values from `lookup` (called
 * once per distinct name, at the moment of the call), never text of the statement.
 */
export function compileTemplate(
  sql: string,
  dialect: Dialect,
  lookup: (name: string) => unknown,
  marker?: (index: number) => string,
): CompiledStatement {
  return compile(tokenize(sql, dialect, true), dialect, lookup, marker);
}

/**
 * `marker` (PostgreSQL only) writes parameter `index` (0-based) into the text instead of
 * `$n`: a caller that cannot bind (COPY takes no parameters) passes a typed literal there.
 */
function compile(
  tokens: Token[],
  dialect: Dialect,
  lookup: (name: string) => unknown,
  marker: (index: number) => string = (index) => `$${index + 1}`,
): CompiledStatement {
  const names: string[] = [];
  const bound: unknown[] = [];
  const values: unknown[] = [];
  let text = '';
  for (const t of tokens) {
    if (t.kind === 'code') {
      // `{{a}}1` must not become `$11`: keep a marker apart from a following word character.
      text += dialect === 'postgres' && /\$\d+$/.test(text) && identChar(t.text[0]) ? ` ${t.text}` : t.text;
      continue;
    }
    let index = names.indexOf(t.name);
    if (index === -1) {
      bound.push(bindValue(lookup(t.name)));
      names.push(t.name);
      index = names.length - 1;
    }
    if (dialect === 'postgres') {
      if (values.length === index) values.push(bound[index]);
      // `x{{a}}` must not become the identifier `x$1`.
      text += `${identChar(text[text.length - 1]) ? ' ' : ''}${marker(index)}`;
    } else {
      values.push(bound[index]);
      text += '?';
    }
  }
  return { text, values, names };
}

/** The statement's leading keyword (SELECT, INSERT, WITH, …), for results that do not say it. */
export function leadingKeyword(sql: string): string | null {
  const stripped = sql.replace(/^(\s+|--[^\n]*\n?|#[^\n]*\n?|\/\*[\s\S]*?\*\/)+/, '');
  const m = /^[A-Za-z]+/.exec(stripped);
  return m ? m[0].toUpperCase() : null;
}
