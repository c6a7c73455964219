import { ConnectorError } from '../types';

// SOQL has no bind variables over REST, so `{{name}}` placeholders are replaced by SOQL
// literals that our code writes: strings quoted with every special character escaped, numbers
// and booleans as their canonical text, dates as ISO date-times, arrays as `(a, b)` for IN. A
// value can only ever become one literal token; it never adds query structure. Placeholders
// inside quotes are refused (they would be text, never what the author meant).

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

const PLACEHOLDER = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/;

type Part = { kind: 'text'; text: string } | { kind: 'placeholder'; name: string };

function parts(soql: string, dotted: boolean): Part[] {
  const out: Part[] = [];
  let text = '';
  let i = 0;
  while (i < soql.length) {
    const c = soql[i];
    if (c === "'") {
      let j = i + 1;
      while (j < soql.length && soql[j] !== "'") j += soql[j] === '\\' ? 2 : 1;
      const quoted = soql.slice(i, j + 1);
      const inner = /\{\{\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}\}/.exec(quoted);
      if (inner)
        throw invalid(
          `placeholder ${inner[0]} is inside quotes; write it without quotes, its value is quoted for you`,
        );
      text += quoted;
      i = j + 1;
      continue;
    }
    if (soql.startsWith('{{', i)) {
      const m = PLACEHOLDER.exec(soql.slice(i));
      if (!m || (!dotted && m[1].includes('.'))) {
        throw invalid(`${soql.slice(i, i + 40)} is not a valid placeholder; names use letters, digits and _`);
      }
      if (text) out.push({ kind: 'text', text });
      text = '';
      out.push({ kind: 'placeholder', name: m[1] });
      i += m[0].length;
      continue;
    }
    text += c;
    i++;
  }
  if (text) out.push({ kind: 'text', text });
  return out;
}

/** Placeholder names of a statement (throws INVALID_STATEMENT on a malformed one). */
export function soqlPlaceholders(soql: string): string[] {
  return [...new Set(parts(soql, false).flatMap((p) => (p.kind === 'placeholder' ? [p.name] : [])))];
}

const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '"': '\\"',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

/** One value as a SOQL literal. */
export function soqlLiteral(value: unknown, nested = false): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid('a SOQL value must be a finite number');
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw invalid('a SOQL value must be a valid date');
    return value.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  if (Array.isArray(value)) {
    if (nested) throw invalid('a SOQL value list cannot contain lists');
    if (value.length === 0) throw invalid('a SOQL value list (IN) needs at least one value');
    return `(${value.map((v) => soqlLiteral(v, true)).join(', ')})`;
  }
  if (typeof value === 'string') return `'${value.replace(/[\\'"\n\r\t\b\f]/g, (c) => ESCAPES[c])}'`;
  throw invalid('a SOQL value is text, a number, a boolean, null or a list of those');
}

/** The statement with every placeholder replaced by the literal of its value. */
export function renderSoql(
  soql: string,
  lookup: (name: string) => unknown,
  dotted = false,
): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  let text = '';
  // A literal is kept apart from a neighbouring word (`Name={{x}}AND` stays two tokens).
  const word = /[A-Za-z0-9_]/;
  for (const p of parts(soql, dotted)) {
    if (p.kind === 'text') {
      text += word.test(text.slice(-1)) && word.test(p.text[0]) ? ` ${p.text}` : p.text;
      continue;
    }
    const value = lookup(p.name);
    values.push(value);
    const lit = soqlLiteral(value);
    text += `${word.test(text.slice(-1)) ? ' ' : ''}${lit}`;
  }
  return { text, values };
}
