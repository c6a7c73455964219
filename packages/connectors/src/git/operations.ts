import type { Branch, Column, ConnectorContext, SchemaDocument } from '../types';
import { ConnectorError } from '../types';
import { type GitConn, GitSession } from './cli';
import { formatOf, mimeOf } from './formats';
import { repoPath } from './remote';
import { blobStream, branchesOf, defaultBranchOf, entryAt, fetchRef, listFiles, listRemote } from './repo';
import { sampleFileFields } from './sample-fields';

/** Saved queries run in execute.ts; the definition finds every core member here. */
export { executeGit } from './execute';

// The connection test, branch listing and schema import of the git kind; saved-query statements
// run in execute.ts.

export async function test(conn: GitConn, ctx: ConnectorContext): Promise<void> {
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

export async function listBranches(conn: GitConn, ctx: ConnectorContext): Promise<Branch[]> {
  const session = await GitSession.open(conn, ctx);
  try {
    return branchesOf(conn.config.default_branch, await listRemote(session));
  } finally {
    await session.close();
  }
}

const MAX_FILES = 1000;
const MAX_SAMPLED = 200;

type Diagnostic = { name: string; target: string; severity: string; code: string; message: string };

export async function importSchema(conn: GitConn, ctx: ConnectorContext): Promise<SchemaDocument> {
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

/** Fields of a CSV or JSON blob of the repository (the shared sampler reads its bytes). */
export async function sampleFields(
  session: GitSession,
  oid: string,
  format: string,
  path: string,
): Promise<Column[]> {
  const blob = blobStream(session, oid, `read ${path}`);
  try {
    return await sampleFileFields(blob.stdout, format, path);
  } finally {
    blob.kill();
  }
}
