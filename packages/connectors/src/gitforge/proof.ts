import { createHash } from 'node:crypto';
import { formatOf } from '../git/formats';
import { sampleFileFields } from '../git/sample-fields';
import { type ChecksCapability, ConnectorError, type ProofCapability, type ProofFile } from '../types';
import type { ForgeKind } from './kind';
import { branchOf, type ForgeSession, openForge } from './session';

// Proof for hosted repositories (docs/proof.md): the provider's repository id, a commit and its
// tree, every asked-for file read at that commit, and the result posted as a commit status.

const MAX_FILE_BYTES = 50 * 1024 * 1024;
const MAX_FILES = 1000;

async function bytesOf(body: AsyncIterable<Uint8Array>, path: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += c.length;
    if (size > MAX_FILE_BYTES)
      throw new ConnectorError('RESPONSE_TOO_LARGE', `${path} is larger than ${MAX_FILE_BYTES} bytes`);
    parts.push(Buffer.from(c));
  }
  return Buffer.concat(parts);
}

/** The git blob id of some bytes, as git computes it (hosted APIs name files by it too). */
const gitBlobOf = (b: Buffer) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');

async function* once(b: Buffer): AsyncGenerator<Buffer> {
  yield b;
}

async function describe(s: ForgeSession, path: string, commit: string): Promise<ProofFile> {
  const file = await s.call(`read ${path}`, (c) => c.readFile(path, commit));
  const bytes = await bytesOf(file.body, path);
  const format = formatOf('auto', path);
  let fields: ProofFile['fields'] = null;
  let readable = true;
  if (format !== 'file') {
    try {
      fields = await sampleFileFields(once(bytes), format, path);
    } catch {
      fields = [];
      readable = false;
    }
  }
  return {
    path,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    git_blob: gitBlobOf(bytes),
    size: bytes.length,
    fields,
    readable,
  };
}

export function forgeProof(kind: ForgeKind): ProofCapability & ChecksCapability {
  return {
    async repositoryId(conn, ctx) {
      const s = await openForge(kind, conn, ctx);
      return s.call('read the repository id', (c) => c.repositoryId());
    },
    async snapshot(conn, ctx, at) {
      const s = await openForge(kind, conn, ctx);
      const ref = at.commit ?? (await branchOf(conn, s, at.ref));
      const commit = await s.call(`read commit ${ref}`, (c) => c.commit(ref));
      const repositoryId = await s.call('read the repository id', (c) => c.repositoryId());
      const all = (await s.call('list the files', (c) => c.files(commit.sha))).map((f) => f.path);
      const files = new Map<string, ProofFile>();
      const missing: string[] = [];
      for (const asked of [...new Set(at.paths)]) {
        const dir = `${asked.replace(/\/$/, '')}/`;
        const matched = all.filter((p) => p === asked || p.startsWith(dir)).slice(0, MAX_FILES);
        if (matched.length === 0) missing.push(asked);
        for (const p of matched) if (!files.has(p)) files.set(p, await describe(s, p, commit.sha));
      }
      return {
        repository_id: repositoryId,
        commit_sha: commit.sha,
        tree_sha: commit.treeSha,
        files: [...files.values()].sort((a, b) => a.path.localeCompare(b.path)),
        missing,
      };
    },
    async publish(conn, ctx, check) {
      const s = await openForge(kind, conn, ctx);
      await s.call(`publish ${check.name}`, (c) => c.publishCheck(check));
      return { url: null };
    },
  };
}
