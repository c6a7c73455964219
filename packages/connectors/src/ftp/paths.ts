import path from 'node:path';
import { ConnectorError } from '../types';

// Statement paths: `{{name}}` placeholders are filled at the moment of the call, then the path
// is resolved below the session's directory (base_path). Whatever the values say, the result
// never leaves that directory, and it never carries a line break (which would smuggle another
// command onto the control connection).

const TEMPLATE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}$/;

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

export type Lookup = (name: string) => unknown;

const asText = (v: unknown) =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** A lookup over query parameters: a placeholder without a value is an error, not "". */
export function parameterLookup(parameters: Record<string, unknown>): Lookup {
  return (name) => {
    if (!Object.hasOwn(parameters, name)) throw invalid(`parameter ${name} has no value`);
    return parameters[name];
  };
}

export function renderText(text: string, lookup: Lookup): string {
  return text.replace(TEMPLATE, (_m, name: string) => asText(lookup(name)));
}

/** Content to write: a string that is one placeholder takes the value itself. */
export function renderContent(value: unknown, lookup: Lookup): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    return whole ? lookup(whole[1]) : renderText(value, lookup);
  }
  if (Array.isArray(value)) return value.map((v) => renderContent(v, lookup));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = renderContent(v, lookup);
    return out;
  }
  return value;
}

/** The absolute remote path of `rendered` below `home`; refuses anything outside it. */
export function resolveBelow(home: string, rendered: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
  if (/[\u0000-\u001f\u007f]/.test(rendered)) throw invalid('path must not contain control characters');
  const base = path.posix.normalize(home.replace(/\\/g, '/') || '/');
  const relative = rendered.replace(/\\/g, '/').replace(/^\/+/, '');
  if (relative === '') throw invalid('path names no file');
  const full = path.posix.normalize(path.posix.join(base, relative));
  const prefix = base.endsWith('/') ? base : `${base}/`;
  if (!full.startsWith(prefix) || full === base) {
    throw new ConnectorError('PERMISSION_DENIED', 'path resolves outside base_path; that is refused');
  }
  return full;
}

/** The path relative to home, as results show it. */
export function relativeTo(home: string, full: string): string {
  return path.posix.relative(home || '/', full);
}
