import { csvRecords } from '@sluice/engine';
import type { Branch, Column, ConnectorContext, ConnectorDefinition, SchemaDocument } from '../types';
import { ConnectorError } from '../types';
import { type GitConn, GitSession } from './cli';
import { executeGit } from './execute';
import { delimiterOf, formatOf, jsonLines, mimeOf } from './formats';
import { jsonRecords } from './json';
import { readGit, writeGit } from './pipeline';
import { gitRepositoryId, gitSnapshot } from './proof';
import { repoPath } from './remote';
import { blobStream, branchesOf, defaultBranchOf, entryAt, fetchRef, listFiles, listRemote } from './repo';
import {
  type GitConfig,
  type GitCredentials,
  type GitStatement,
  gitConfigSchema,
  gitCredentialsSchema,
  gitOperationSchema,
  gitStatementSchema,
} from './schemas';

export * from './schemas';

// The git connector (docs/connectors/git.md): any HTTPS or SSH git server through the git
// CLI (cli.ts has the sandbox). Test connection lists the remote and checks default_branch
// and base_path; schema import lists the files under base_path with the fields of CSV and
// JSON files; saved queries read, write and list branches; pipelines read and commit files.

async function test(conn: GitConn, ctx: ConnectorContext): Promise<void> {
  const session = await GitSession.open(conn, ctx);
  try {
    const refs = await listRemote(session);
    if (conn.config.default_branch && !refs.branches.has(conn.config.default_branch)) {
      throw new ConnectorError('NOT_FOUND', `default_branch ${conn.config.default_branch} was not found`);
    }
    const base = repoPath(conn.config.base_path, undefined);
    if (base === '') return;
    const branch = defaultBranchOf(conn.config.default_branch, refs);
    const commit = await fetchRef(session, branch);
    const entry = await entryAt(session, commit, base);
    if (entry?.type !== 'tree')
      throw new ConnectorError('NOT_FOUND', `base_path ${base} is not a directory on ${branch}`);
  } finally {
    await session.close();
  }
}

async function listBranches(conn: GitConn, ctx: ConnectorContext): Promise<Branch[]> {
  const session = await GitSession.open(conn, ctx);
  try {
    return branchesOf(conn.config.default_branch, await listRemote(session));
  } finally {
    await session.close();
  }
}

const MAX_FILES = 1000;
const MAX_SAMPLED = 200;
const SAMPLE_RECORDS = 100;

type Diagnostic = { name: string; target: string; severity: string; code: string; message: string };

async function importSchema(conn: GitConn, ctx: ConnectorContext): Promise<SchemaDocument> {
  const session = await GitSession.open(conn, ctx);
  try {
    const branch = defaultBranchOf(conn.config.default_branch, await listRemote(session));
    const commit = await fetchRef(session, branch);
    await session.dropSecrets();
    const base = repoPath(conn.config.base_path, undefined);
    const { files, total } = await listFiles(session, commit, base, MAX_FILES);
    const diagnostics: Diagnostic[] = [];
    if (total > files.length) {
      diagnostics.push({
        name: base || '/',
        target: base || '/',
        severity: 'warning',
        code: 'TOO_MANY_FILES',
        message: `${total} files; the first ${files.length} are listed`,
      });
    }
    let sampled = 0;
    const out: { name: string; fields: Column[]; mime_type?: string; resource_id?: string }[] = [];
    for (const f of files) {
      const name = base ? f.path.slice(base.length + 1) : f.path;
      const format = formatOf('auto', f.path);
      let fields: Column[] = [];
      if (format !== 'file' && sampled < MAX_SAMPLED) {
        sampled++;
        try {
          fields = await sampleFields(session, f.oid, format, f.path);
        } catch {
          diagnostics.push({
            name,
            target: f.path,
            severity: 'warning',
            code: 'UNREADABLE_FILE',
            message: `${name} could not be read as ${format.toUpperCase()}`,
          });
        }
      }
      out.push({ name, fields, mime_type: mimeOf(f.path), resource_id: f.path });
    }
    return {
      schema_type: 'file',
      type: 'git',
      files: out,
      ...(diagnostics.length > 0 ? { diagnostics } : {}),
    };
  } finally {
    await session.close();
  }
}

/** Fields of a CSV (header and sampled cell types) or JSON file (keys of the first records). */
async function sampleFields(
  session: GitSession,
  oid: string,
  format: string,
  path: string,
): Promise<Column[]> {
  const blob = blobStream(session, oid, `read ${path}`);
  try {
    if (format === 'csv') {
      let header: string[] | null = null;
      const types: string[][] = [];
      let n = 0;
      outer: for await (const batch of csvRecords(blob.stdout, delimiterOf(undefined, path))) {
        for (const rec of batch) {
          if (!header) {
            header = rec.map((c, i) => c ?? `column${i}`);
            continue;
          }
          rec.forEach((v, i) => {
            types[i] ??= [];
            if (v !== null) types[i].push(scalarType(v));
          });
          if (++n >= SAMPLE_RECORDS) break outer;
        }
      }
      return (header ?? []).map((name, i) => ({ name, type: merge(types[i] ?? []) }));
    }
    const records = format === 'json' ? jsonRecords(blob.stdout, undefined) : jsonLines(blob.stdout);
    const seen = new Map<string, string[]>();
    let n = 0;
    outer: for await (const batch of records) {
      for (const r of batch) {
        if (r && typeof r === 'object' && !Array.isArray(r)) {
          for (const [k, v] of Object.entries(r)) {
            if (!seen.has(k)) seen.set(k, []);
            if (v !== null) seen.get(k)!.push(jsonType(v));
          }
        }
        if (++n >= SAMPLE_RECORDS) break outer;
      }
    }
    return [...seen].map(([name, ts]) => ({ name, type: merge(ts) }));
  } finally {
    blob.kill();
  }
}

const scalarType = (v: string) =>
  /^-?\d{1,18}$/.test(v)
    ? 'integer'
    : /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(v)
      ? 'number'
      : /^(true|false)$/i.test(v)
        ? 'boolean'
        : 'string';

const jsonType = (v: unknown) =>
  typeof v === 'number'
    ? Number.isInteger(v)
      ? 'integer'
      : 'number'
    : typeof v === 'boolean'
      ? 'boolean'
      : typeof v === 'string'
        ? 'string'
        : Array.isArray(v)
          ? 'array'
          : 'object';

function merge(types: string[]): string {
  const set = new Set(types);
  if (set.size === 0) return 'string';
  if (set.size === 1) return types[0];
  if ([...set].every((t) => t === 'integer' || t === 'number')) return 'number';
  return 'string';
}

export const gitConnector: ConnectorDefinition<GitConfig, GitCredentials, GitStatement> = {
  type: 'git',
  label: 'Git',
  configSchema: gitConfigSchema,
  credentialsSchema: gitCredentialsSchema,
  credentialsRequired: true,
  defaultReadOnly: false,
  statementSchema: gitStatementSchema,
  resultType: 'git',
  pipelineOperation: { source: gitOperationSchema, sink: gitOperationSchema },
  test,
  importSchema,
  proof: {
    repositoryId: gitRepositoryId,
    snapshot: (conn, ctx, at) => gitSnapshot(conn, ctx, at, sampleFields),
  },
  listBranches,
  execute: executeGit,
  read: readGit,
  write: writeGit,
};
