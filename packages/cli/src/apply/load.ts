import fs from 'node:fs';
import path from 'node:path';
import { parseDocuments } from '../document';
import { CliError, ExitCode } from '../exit';
import type { Doc } from './types';

export type Loaded = { doc: Doc; file: string; dir: string };

const EXTENSIONS = /\.(ya?ml|json)$/i;

/** The files a -f names: a file as is, a directory's JSON and YAML files (recursively, sorted). */
function filesOf(target: string): string[] {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(target);
  } catch {
    throw new CliError(ExitCode.failed, `-f ${target}: no such file or directory`);
  }
  if (!stat.isDirectory()) return [path.resolve(target)];
  return fs
    .readdirSync(target, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const p = path.join(target, e.name);
      if (e.isDirectory()) return filesOf(p);
      return EXTENSIONS.test(e.name) ? [path.resolve(p)] : [];
    });
}

/**
 * `${VAR}` and `${VAR:-default}` in string values, from the apply environment; `$${` is a
 * literal `${`. For addresses and names that differ per machine, never for credentials (which
 * files may not hold at all).
 */
export function substitute(value: unknown, env: Record<string, string | undefined>, where: string): unknown {
  if (typeof value === 'string') {
    return value.replace(
      /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (all, escaped, name, fallback) => {
        if (escaped) return all.slice(1);
        const v = env[name];
        if (v !== undefined && v !== '') return v;
        if (fallback !== undefined) return fallback;
        throw new CliError(
          ExitCode.failed,
          `${where}: environment variable ${name} is not set (used as \${${name}})`,
        );
      },
    );
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, env, `${where}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, substitute(v, env, `${where}.${k}`)]),
    );
  }
  return value;
}

/**
 * A data source's `config.port` given as a variable (`port: ${PGPORT:-5432}`) is text after
 * substitution; digits only become the number the connectors take (docs/cli.md "sluice apply").
 */
export function portAsNumber(doc: Doc): Doc {
  const config = doc.config as Record<string, unknown> | undefined;
  if (doc.kind !== 'DataSource' || !config || typeof config.port !== 'string') return doc;
  if (!/^\d{1,5}$/.test(config.port)) return doc;
  return { ...doc, config: { ...config, port: Number(config.port) } };
}

/** Every resource document of the targets, in file order. */
export function loadDocuments(targets: string[], env: Record<string, string | undefined>): Loaded[] {
  const files = [...new Set(targets.flatMap(filesOf))];
  const parsed = files.map((file) => ({
    file,
    docs: parseDocuments(fs.readFileSync(file, 'utf8'), file).flatMap((d) => (Array.isArray(d) ? d : [d])),
  }));
  // A spec_file another document points at is a pipeline spec, not a resource document.
  const specFiles = new Set(
    parsed.flatMap(({ file, docs }) =>
      docs
        .filter((d) => d && typeof d === 'object' && typeof (d as Doc).spec_file === 'string')
        .map((d) => path.resolve(path.dirname(file), String((d as Doc).spec_file))),
    ),
  );
  const out: Loaded[] = [];
  for (const { file, docs } of parsed) {
    if (specFiles.has(file)) continue;
    docs.forEach((d, i) => {
      const where = `${path.relative(process.cwd(), file) || file}#${i + 1}`;
      if (!d || typeof d !== 'object' || typeof (d as Doc).kind !== 'string') {
        throw new CliError(ExitCode.failed, `${where}: every document needs a kind (e.g. kind: Project)`);
      }
      out.push({ doc: portAsNumber(substitute(d, env, where) as Doc), file, dir: path.dirname(file) });
    });
  }
  return out;
}
