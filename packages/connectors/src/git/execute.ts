import { createHash } from 'node:crypto';
import { csvRecords } from '@sluice/engine';
import { csvLine } from '../payloads/csv';
import { type ConnectorContext, ConnectorError, type QueryResult } from '../types';
import { type GitConn, GitSession } from './cli';
import type { GitStatement } from './config';
import { basename, delimiterOf, type Format, formatOf, isTextual, jsonLines, mimeOf } from './formats';
import { jsonRecords } from './json';
import { repoPath } from './remote';
import { blobStream, branchesOf, commitFile, defaultBranchOf, fetchRef, fileAt, listRemote } from './repo';

// Saved queries over git (result_type `git`): read a file at a branch or commit (rows of a
// CSV or JSON file up to the row limit, or a raw file's metadata and text), commit a file,
// or list the branches. `{{name}}` placeholders in path, ref, branch, message and content
// are replaced by the parameters' text; the results are checked like any user value.

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

function fill(template: string, parameters: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (_m, name: string) => {
    if (!(name in parameters))
      throw new ConnectorError('INVALID_STATEMENT', `parameter ${name} is used but not given`);
    const v = parameters[name];
    return v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  });
}

function fillDeep(value: unknown, parameters: Record<string, unknown>): unknown {
  if (typeof value === 'string') return fill(value, parameters);
  if (Array.isArray(value)) return value.map((v) => fillDeep(v, parameters));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillDeep(v, parameters)]));
  return value;
}

const opt = (v: string | undefined, p: Record<string, unknown>) =>
  v === undefined ? undefined : fill(v, p) || undefined;

export async function executeGit(
  conn: GitConn,
  statement: GitStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  if (statement.operation === 'write' && ctx.readOnly) {
    throw new ConnectorError('PERMISSION_DENIED', 'the data source is read-only: write is not allowed');
  }
  const session = await GitSession.open(conn, ctx);
  try {
    const refs = await listRemote(session);
    if (statement.operation === 'list_branches') {
      const branches = branchesOf(conn.config.default_branch, refs);
      return {
        result_type: 'git',
        payload: { operation: 'list_branches', branches },
        row_count: branches.length,
        truncated: false,
      };
    }
    const file = repoPath(conn.config.base_path, opt(statement.path, parameters));
    if (file === '') throw new ConnectorError('INVALID_STATEMENT', 'the path names no file');
    const format = formatOf(statement.format, file);
    if (statement.operation === 'write')
      return await write(session, conn, statement, parameters, file, format, refs);
    return await read(session, conn, statement, parameters, file, format, refs, ctx);
  } finally {
    await session.close();
  }
}

async function read(
  session: GitSession,
  conn: GitConn,
  st: GitStatement,
  parameters: Record<string, unknown>,
  file: string,
  format: Format,
  refs: Awaited<ReturnType<typeof listRemote>>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const ref = opt(st.ref, parameters) ?? defaultBranchOf(conn.config.default_branch, refs);
  const commit = await fetchRef(session, ref);
  const entry = await fileAt(session, commit, file, ref);
  const base = { operation: 'read', format, ref, commit, path: file };
  const blob = blobStream(session, entry.oid, `read ${file}`);
  const { maxRows, maxResultBytes } = ctx.limits;

  if (format === 'file') {
    const mime = mimeOf(file);
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    let keptBytes = 0;
    for await (const chunk of blob.stdout) {
      hash.update(chunk);
      if (keptBytes < maxResultBytes) {
        kept.push(chunk);
        keptBytes += chunk.length;
      }
    }
    const textual = isTextual(mime);
    const content = textual ? Buffer.concat(kept).subarray(0, maxResultBytes).toString('utf8') : null;
    return {
      result_type: 'git',
      payload: {
        ...base,
        file: {
          mime_type: mime,
          size_bytes: entry.size,
          digest_algorithm: 'sha256',
          digest: hash.digest('hex'),
          filename: basename(file),
        },
        content,
      },
      row_count: null,
      truncated: textual && entry.size > maxResultBytes,
    };
  }

  const rows: unknown[] = [];
  let columnNames: string[] | null = null;
  let truncated = false;
  let bytes = 0;
  try {
    if (format === 'csv') {
      for await (const batch of csvRecords(blob.stdout, delimiterOf(st.delimiter, file))) {
        for (const rec of batch) {
          if (st.has_header && columnNames === null) {
            columnNames = rec.map((c, i) => c ?? `column${i}`);
            continue;
          }
          if (rows.length >= maxRows) {
            truncated = true;
            break;
          }
          bytes += csvLine(rec).length;
          rows.push(rec);
        }
        if (truncated || bytes > maxResultBytes) break;
      }
    } else {
      const records = format === 'json' ? jsonRecords(blob.stdout, st.records_path) : jsonLines(blob.stdout);
      for await (const batch of records) {
        for (const r of batch) {
          if (rows.length >= maxRows) {
            truncated = true;
            break;
          }
          bytes += JSON.stringify(r)?.length ?? 4;
          rows.push(r);
        }
        if (truncated || bytes > maxResultBytes) break;
      }
    }
  } finally {
    blob.kill();
  }
  if (bytes > maxResultBytes) {
    truncated = true;
    while (rows.length > 0 && bytes > maxResultBytes) {
      const r = rows.pop();
      bytes -= JSON.stringify(r)?.length ?? 4;
    }
  }
  return {
    result_type: 'git',
    payload: {
      ...base,
      ...(format === 'csv' ? { column_names: columnNames, is_headless_csv: !st.has_header } : {}),
      rows,
      row_count: rows.length,
      file: { mime_type: mimeOf(file), size_bytes: entry.size, filename: basename(file) },
    },
    row_count: rows.length,
    truncated,
  };
}

async function write(
  session: GitSession,
  conn: GitConn,
  st: GitStatement,
  parameters: Record<string, unknown>,
  file: string,
  format: Format,
  refs: Awaited<ReturnType<typeof listRemote>>,
): Promise<QueryResult> {
  let fallback: string | null = null;
  try {
    fallback = defaultBranchOf(conn.config.default_branch, refs);
  } catch {
    fallback = null;
  }
  const branch = opt(st.branch ?? st.ref, parameters) ?? fallback;
  if (!branch)
    throw new ConnectorError('NOT_FOUND', 'the repository has no branch: name one in the statement');
  const content = fillDeep(st.content, parameters);
  const { data, rows } = encodeContent(content, format, delimiterOf(st.delimiter, file));
  const message = opt(st.message, parameters) ?? `Sluice: write ${file}`;
  const result = await commitFile(session, {
    branch,
    fallbackBase: fallback,
    path: file,
    content: data,
    message,
  });
  return {
    result_type: 'git',
    payload: {
      operation: 'write',
      format,
      ref: branch,
      path: file,
      target_path: file,
      commit: result.commit,
      parent_commit: result.parent,
      changed: result.changed,
      branch_created: result.created,
      written_bytes: result.bytes,
      written_rows: rows,
    },
    row_count: rows,
    truncated: false,
  };
}

/** Statement content as file bytes: text as is; objects as JSON, CSV or JSON Lines. */
function encodeContent(content: unknown, format: Format, delimiter: string): { data: Buffer; rows: number } {
  if (typeof content === 'string') return { data: Buffer.from(content), rows: 0 };
  const records = Array.isArray(content) ? content : [content];
  if (format === 'csv') {
    const objects = records.filter(
      (r): r is Record<string, unknown> => !!r && typeof r === 'object' && !Array.isArray(r),
    );
    if (objects.length !== records.length)
      throw new ConnectorError('INVALID_STATEMENT', 'CSV content must be an object or an array of objects');
    const names = [...new Set(objects.flatMap((o) => Object.keys(o)))];
    const cell = (v: unknown) =>
      v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);
    const text =
      csvLine(names, delimiter) +
      objects
        .map((o) =>
          csvLine(
            names.map((n) => cell(o[n])),
            delimiter,
          ),
        )
        .join('');
    return { data: Buffer.from(text), rows: objects.length };
  }
  if (format === 'jsonl')
    return { data: Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join('')), rows: records.length };
  return {
    data: Buffer.from(`${JSON.stringify(content, null, 2)}\n`),
    rows: Array.isArray(content) ? content.length : 1,
  };
}
