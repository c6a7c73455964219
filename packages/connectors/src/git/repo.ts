import { ConnectorError } from '../types';
import type { GitSession } from './cli';
import { checkBranch, checkRef } from './remote';

// The remote operations: branches, a shallow fetch of one branch or commit, the files of a
// tree, a blob as a stream, and a file committed and pushed without a working tree.

const FETCHED = 'refs/sluice/fetched';

export type RemoteRefs = { head: string | null; branches: Map<string, string> };

export async function listRemote(s: GitSession): Promise<RemoteRefs> {
  const out = await s.run(['ls-remote', '--symref', 'origin', 'HEAD', 'refs/heads/*'], {
    network: true,
    what: 'list branches',
  });
  let head: string | null = null;
  const branches = new Map<string, string>();
  for (const line of out.toString('utf8').split('\n')) {
    const sym = /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line);
    if (sym) {
      head = sym[1];
      continue;
    }
    const m = /^([0-9a-f]{40,64})\trefs\/heads\/(.+)$/.exec(line);
    if (m) branches.set(m[2], m[1]);
  }
  return { head, branches };
}

/** Branches by name; the default is default_branch when set, else the remote's HEAD. */
export function branchesOf(configured: string | undefined, refs: RemoteRefs) {
  const def = configured ?? refs.head;
  return [...refs.branches.keys()].sort().map((name) => ({ name, is_default: name === def }));
}

/** The branch used when none is named: default_branch, else the remote's HEAD. */
export function defaultBranchOf(configured: string | undefined, refs: RemoteRefs): string {
  if (configured) return configured;
  if (refs.head) return refs.head;
  const first = [...refs.branches.keys()].sort()[0];
  if (first) return first;
  throw new ConnectorError('NOT_FOUND', 'the repository has no branches yet');
}

/** Fetches a branch or commit (depth 1 where the server allows) and answers its commit id. */
export async function fetchRef(s: GitSession, ref: string): Promise<string> {
  const r = checkRef(ref);
  if (r.kind === 'branch') {
    try {
      await s.run(
        ['fetch', '--progress', '--no-tags', '--depth=1', 'origin', `+refs/heads/${r.name}:${FETCHED}`],
        {
          network: true,
          what: `fetch branch ${r.name}`,
        },
      );
    } catch (err) {
      if (err instanceof ConnectorError && err.code === 'NOT_FOUND' && /branch or commit/.test(err.message))
        throw new ConnectorError('NOT_FOUND', `branch ${r.name} was not found`);
      throw err;
    }
    return (await s.run(['rev-parse', '--verify', `${FETCHED}^{commit}`])).toString('utf8').trim();
  }
  try {
    await s.run(['fetch', '--progress', '--no-tags', '--depth=1', 'origin', `+${r.name}:${FETCHED}`], {
      network: true,
      what: `fetch commit ${r.name}`,
    });
  } catch (err) {
    // Servers that only serve advertised tips: fetch the branches and look for the commit.
    if (!(err instanceof ConnectorError) || !['NOT_FOUND', 'REMOTE_ERROR'].includes(err.code)) throw err;
    await s.run(['fetch', '--progress', '--no-tags', 'origin', '+refs/heads/*:refs/sluice/heads/*'], {
      network: true,
      what: `fetch commit ${r.name}`,
    });
  }
  try {
    await s.run(['cat-file', '-e', `${r.name}^{commit}`]);
  } catch {
    throw new ConnectorError('NOT_FOUND', `commit ${r.name} was not found`);
  }
  return r.name;
}

export type TreeEntry = { path: string; oid: string; type: string; size: number };

/** An object of a commit by path: a blob or tree, with its size; null when absent. */
export async function entryAt(s: GitSession, commit: string, path: string): Promise<TreeEntry | null> {
  const spec = path === '' ? `${commit}^{tree}` : `${commit}:${path}`;
  const out = (await s.run(['cat-file', '--batch-check'], { input: `${spec}\n` })).toString('utf8').trim();
  const m = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(out);
  if (!m) return null;
  return { path, oid: m[1], type: m[2], size: Number(m[3]) };
}

/** The blob of a file at a commit; NOT_FOUND names the path and ref the user gave. */
export async function fileAt(
  s: GitSession,
  commit: string,
  path: string,
  refName: string,
): Promise<TreeEntry> {
  const e = await entryAt(s, commit, path);
  if (!e) throw new ConnectorError('NOT_FOUND', `${path} was not found at ${refName}`);
  if (e.type !== 'blob') throw new ConnectorError('INVALID_STATEMENT', `${path} at ${refName} is not a file`);
  return e;
}

/** Files under `base` (recursively), up to `max`. */
export async function listFiles(s: GitSession, commit: string, base: string, max: number) {
  const args = ['ls-tree', '-r', '-z', '--long', commit];
  if (base) args.push('--', base);
  const out = (await s.run(args)).toString('utf8');
  const files: TreeEntry[] = [];
  let total = 0;
  for (const rec of out.split('\0')) {
    const m = /^(\d+) (\w+) ([0-9a-f]+) +(\S+)\t(.+)$/s.exec(rec);
    if (m?.[2] !== 'blob') continue;
    total++;
    if (files.length < max) files.push({ path: m[5], oid: m[3], type: 'blob', size: Number(m[4]) || 0 });
  }
  return { files, total };
}

export function blobStream(s: GitSession, oid: string, what: string) {
  return s.stream(['cat-file', 'blob', oid], what);
}

export type CommitResult = {
  commit: string;
  parent: string | null;
  changed: boolean;
  bytes: number;
  created: boolean;
};

/**
 * Writes `content` to `path` on `branch` as one commit and pushes it (a fast-forward only: a
 * branch that moved meanwhile fails rather than losing the other commit). A missing branch is
 * created from the default branch (or as the first commit of an empty repository).
 */
export async function commitFile(
  s: GitSession,
  o: {
    branch: string;
    fallbackBase: string | null;
    path: string;
    content: AsyncIterable<Uint8Array> | Buffer;
    message: string;
    countBytes?: (n: number) => void;
  },
): Promise<CommitResult> {
  const branch = checkBranch(o.branch);
  const refs = await listRemote(s);
  let parent: string | null = null;
  let created = false;
  if (refs.branches.has(branch)) parent = await fetchRef(s, branch);
  else {
    created = true;
    if (o.fallbackBase && refs.branches.has(o.fallbackBase)) parent = await fetchRef(s, o.fallbackBase);
  }
  let bytes = 0;
  async function* counted(): AsyncGenerator<Uint8Array> {
    const src = Buffer.isBuffer(o.content) ? [o.content] : o.content;
    for await (const chunk of src) {
      bytes += chunk.length;
      o.countBytes?.(chunk.length);
      yield chunk;
    }
  }
  const blob = (
    await s.run(['hash-object', '-w', '--no-filters', '--stdin'], {
      input: counted(),
      what: 'store the file',
    })
  )
    .toString('utf8')
    .trim();
  const index = { GIT_INDEX_FILE: `${s.dir}/index` };
  await s.run(parent ? ['read-tree', parent] : ['read-tree', '--empty'], { env: index });
  await s.run(['update-index', '--add', '--cacheinfo', `100644,${blob},${o.path}`], { env: index });
  const tree = (await s.run(['write-tree'], { env: index })).toString('utf8').trim();
  if (parent) {
    const parentTree = (await s.run(['rev-parse', `${parent}^{tree}`])).toString('utf8').trim();
    if (parentTree === tree && !created) return { commit: parent, parent, changed: false, bytes, created };
  }
  const commit = (
    await s.run(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-F', '-'], { input: o.message })
  )
    .toString('utf8')
    .trim();
  await s.run(['push', '--progress', '--no-verify', 'origin', `${commit}:refs/heads/${branch}`], {
    network: true,
    what: `push to ${branch}`,
  });
  return { commit, parent, changed: true, bytes, created };
}
