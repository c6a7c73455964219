import { createHash } from 'node:crypto';
import type { Column, ConnectorContext, ProofFile, ProofSnapshot } from '../types';
import { ConnectorError } from '../types';
import { type GitConn, GitSession } from './cli';
import { formatOf } from './formats';
import { checkRef, repoPath } from './remote';
import { blobStream, defaultBranchOf, entryAt, listFiles, listRemote, type TreeEntry } from './repo';

// Proof reads a repository at one commit with its whole history (plain git has no repository
// id but its root commit, which needs the history), unlike pipeline reads, which fetch depth 1.

const HEADS = 'refs/sluice/heads';
const MAX_FILES = 1000;

type Sampler = (s: GitSession, oid: string, format: string, path: string) => Promise<Column[]>;

async function fetchHistory(s: GitSession): Promise<void> {
  await s.run(['fetch', '--no-tags', 'origin', `+refs/heads/*:${HEADS}/*`], {
    network: true,
    what: 'fetch the history',
  });
}

/** The commit that `commit`, `ref` or the default branch names; fetches it when no branch has it. */
async function resolveCommit(s: GitSession, conn: GitConn, at: { commit?: string; ref?: string }) {
  if (at.commit) {
    const r = checkRef(at.commit);
    if (r.kind !== 'commit') throw new ConnectorError('INVALID_STATEMENT', 'commit_sha must be a commit id');
    if (!(await hasCommit(s, r.name))) {
      await s
        .run(['fetch', '--no-tags', 'origin', r.name], { network: true, what: `fetch commit ${r.name}` })
        .catch(() => undefined);
      if (!(await hasCommit(s, r.name)))
        throw new ConnectorError('NOT_FOUND', `commit ${r.name} was not found`);
    }
    return r.name;
  }
  const branch = at.ref ?? defaultBranchOf(conn.config.default_branch, await listRemote(s));
  const r = checkRef(branch);
  if (r.kind === 'commit') return resolveCommit(s, conn, { commit: r.name });
  const out = await s
    .run(['rev-parse', '--verify', '--quiet', `${HEADS}/${r.name}^{commit}`])
    .catch(() => null);
  const sha = out?.toString('utf8').trim();
  if (!sha) throw new ConnectorError('NOT_FOUND', `branch ${r.name} was not found`);
  return sha;
}

async function hasCommit(s: GitSession, sha: string): Promise<boolean> {
  return s.run(['cat-file', '-e', `${sha}^{commit}`]).then(
    () => true,
    () => false,
  );
}

/** The oldest root commit reachable from `commit` (a merge of unrelated histories has several). */
async function rootOf(s: GitSession, commit: string): Promise<string> {
  const roots = (await s.run(['rev-list', '--max-parents=0', commit])).toString('utf8').trim().split('\n');
  return roots.filter(Boolean).sort()[0];
}

async function sha256Of(s: GitSession, oid: string, path: string): Promise<string> {
  const blob = blobStream(s, oid, `read ${path}`);
  const hash = createHash('sha256');
  try {
    for await (const chunk of blob.stdout) hash.update(chunk);
  } finally {
    blob.kill();
  }
  return hash.digest('hex');
}

async function describe(s: GitSession, e: TreeEntry, name: string, sample: Sampler): Promise<ProofFile> {
  const format = formatOf('auto', e.path);
  let fields: Column[] | null = null;
  let readable = true;
  if (format !== 'file') {
    try {
      fields = await sample(s, e.oid, format, e.path);
    } catch {
      fields = [];
      readable = false;
    }
  }
  return {
    path: name,
    sha256: await sha256Of(s, e.oid, e.path),
    git_blob: e.oid,
    size: e.size,
    fields,
    readable,
  };
}

export async function gitRepositoryId(conn: GitConn, ctx: ConnectorContext): Promise<string> {
  const s = await GitSession.open(conn, ctx);
  try {
    await fetchHistory(s);
    return await rootOf(s, await resolveCommit(s, conn, {}));
  } finally {
    await s.close();
  }
}

export async function gitSnapshot(
  conn: GitConn,
  ctx: ConnectorContext,
  at: { commit?: string; ref?: string; paths: string[] },
  sample: Sampler,
): Promise<ProofSnapshot> {
  const s = await GitSession.open(conn, ctx);
  try {
    await fetchHistory(s);
    const commit = await resolveCommit(s, conn, at);
    await s.dropSecrets();
    const tree = (await s.run(['rev-parse', `${commit}^{tree}`])).toString('utf8').trim();
    const base = repoPath(conn.config.base_path, undefined);
    const files = new Map<string, ProofFile>();
    const missing: string[] = [];
    for (const asked of [...new Set(at.paths)]) {
      const full = repoPath(conn.config.base_path, asked);
      const entry = await entryAt(s, commit, full);
      const nameOf = (p: string) => (base ? p.slice(base.length + 1) : p);
      if (!entry) missing.push(asked);
      else if (entry.type === 'tree') {
        for (const f of (await listFiles(s, commit, full, MAX_FILES)).files) {
          if (!files.has(f.path)) files.set(f.path, await describe(s, f, nameOf(f.path), sample));
        }
      } else if (!files.has(full)) files.set(full, await describe(s, entry, asked, sample));
    }
    return {
      repository_id: await rootOf(s, commit),
      commit_sha: commit,
      tree_sha: tree,
      files: [...files.values()].sort((a, b) => a.path.localeCompare(b.path)),
      missing,
    };
  } finally {
    await s.close();
  }
}
