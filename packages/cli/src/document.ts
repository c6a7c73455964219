import fs from 'node:fs';
import YAML from 'yaml';
import { CliError, ExitCode } from './exit';
import { readStdin } from './io';

/** Parses JSON or YAML text (JSON is YAML; `.json` files are parsed strictly as JSON). */
export function parseDocuments(text: string, name: string): unknown[] {
  if (name.endsWith('.json')) {
    try {
      return [JSON.parse(text)];
    } catch (err) {
      throw new CliError(ExitCode.failed, `${name} is not JSON: ${(err as Error).message}`);
    }
  }
  const docs = YAML.parseAllDocuments(text);
  const out: unknown[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      throw new CliError(ExitCode.failed, `${name} is not YAML: ${doc.errors[0].message.split('\n')[0]}`);
    }
    const value = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

/** One JSON or YAML object from a file (`-` reads standard input). */
export async function readObjectFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(
      ExitCode.failed,
      `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const docs = parseDocuments(text, file);
  const value = docs[0];
  if (docs.length !== 1 || !value || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError(ExitCode.failed, `${file} must hold one JSON or YAML object`);
  }
  return value as Record<string, unknown>;
}

/** `--set a.b=value`: the value as JSON when it parses (numbers, booleans, objects), else a string. */
export function applySet(target: Record<string, unknown>, assignment: string) {
  const at = assignment.indexOf('=');
  if (at < 1) throw new CliError(ExitCode.failed, `--set ${assignment.slice(0, 40)}: expected KEY=VALUE`);
  const keys = assignment.slice(0, at).split('.');
  const raw = assignment.slice(at + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // a plain string
  }
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    node[key] = next && typeof next === 'object' && !Array.isArray(next) ? next : {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}
