import { ConnectorError } from '../types';

// `{{name}}` placeholders of BigQuery SQL become named query parameters (`@name`); values are
// sent beside the text, never spliced. Quoted strings, quoted identifiers and comments are
// skipped, and a placeholder inside quotes is refused (it would be text, not a parameter).
// Dotted template names (`{{runtime.run_slug}}`) get generated parameter names.

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);
const PLACEHOLDER = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}/;

export type CompiledQuery = { text: string; names: Map<string, string> };

function quotedEnd(sql: string, start: number): number {
  const q = sql[start];
  const triple = sql.startsWith(q.repeat(3), start);
  let i = start + (triple ? 3 : 1);
  while (i < sql.length) {
    if (sql[i] === '\\') {
      i += 2;
      continue;
    }
    if (triple ? sql.startsWith(q.repeat(3), i) : sql[i] === q) return i + (triple ? 3 : 1);
    i++;
  }
  return sql.length;
}

/** The SQL with `@param` markers, and template name → parameter name. */
export function compileBigQuery(sql: string): CompiledQuery {
  const names = new Map<string, string>();
  let text = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    let end = -1;
    if (c === "'" || c === '"' || c === '`') {
      end = quotedEnd(sql, i);
      const segment = sql.slice(i, end);
      if (c !== '`' && /\{\{\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}\}/.test(segment))
        throw invalid(
          'a placeholder is inside quotes; write it without quotes, it is sent as a query parameter',
        );
    } else if (sql.startsWith('--', i) || c === '#') {
      const nl = sql.indexOf('\n', i);
      end = nl === -1 ? sql.length : nl;
    } else if (sql.startsWith('/*', i)) {
      const close = sql.indexOf('*/', i + 2);
      end = close === -1 ? sql.length : close + 2;
    } else if (sql.startsWith('{{', i)) {
      const m = PLACEHOLDER.exec(sql.slice(i));
      if (!m) throw invalid('{{ starts an invalid placeholder; names use letters, digits and _');
      let param = names.get(m[1]);
      if (!param) {
        param = m[1].includes('.') ? `sluice_t${names.size + 1}` : m[1];
        names.set(m[1], param);
      }
      text += `@${param}`;
      i += m[0].length;
      continue;
    }
    if (end > i) {
      text += sql.slice(i, end);
      i = end;
    } else {
      text += c;
      i++;
    }
  }
  return { text, names };
}

/** BigQuery parameter types the SDK cannot infer from the value itself (null, empty array). */
export function parameterTypes(params: Record<string, unknown>): Record<string, string | string[]> {
  const types: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(params)) {
    if (v === null || v === undefined) types[k] = 'STRING';
    else if (Array.isArray(v) && v.length === 0) types[k] = ['STRING'];
  }
  return types;
}

/** A value as a query parameter: JSON objects are sent as JSON text. */
export function parameterValue(v: unknown): unknown {
  if (v === undefined) return null;
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date))
    return JSON.stringify(v);
  return v;
}
