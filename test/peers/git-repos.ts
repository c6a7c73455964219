// Bare repositories for the git peers, seeded with the local git CLI (file paths, never the
// connector): a commit of files per branch, and a look at what a branch holds afterwards.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The SSH peer's user pushes into repositories created here: they are shared (world
// writable, for loopback tests only) and every owner is trusted.
const globalConfig = path.join(os.tmpdir(), 'sluice-git-peer.gitconfig');
const trustAll = '[safe]\n\tdirectory = *\n';
// Written once: another suite's git may be reading it right now.
if (!fs.existsSync(globalConfig) || fs.readFileSync(globalConfig, 'utf8') !== trustAll)
  fs.writeFileSync(globalConfig, trustAll);

const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: globalConfig,
  GIT_AUTHOR_NAME: 'Peer',
  GIT_AUTHOR_EMAIL: 'peer@localhost',
  GIT_COMMITTER_NAME: 'Peer',
  GIT_COMMITTER_EMAIL: 'peer@localhost',
};

export function git(cwd: string, args: string[], input?: string | Buffer): string {
  return execFileSync('git', args, { cwd, env: gitEnv, input, maxBuffer: 512 * 1024 * 1024 }).toString(
    'utf8',
  );
}

/** Creates `<root>/<name>.git` (HEAD on `main`). */
export function createBareRepo(root: string, name: string): string {
  const dir = path.join(root, `${name}.git`);
  fs.mkdirSync(dir, { recursive: true });
  // 0666: objects root writes while seeding stay writable for the SSH peer's user, whose pushes
  // add loose objects to the same fan-out directories.
  git(dir, ['init', '-q', '--bare', '--shared=0666', '--initial-branch=main']);
  git(dir, ['config', 'http.receivepack', 'true']);
  execFileSync('chmod', ['-R', 'a+rwX', dir]);
  return dir;
}

/** One commit on `branch` (created from its parent or `from`) holding `files`; answers its id. */
export function commitFiles(
  repo: string,
  branch: string,
  files: Record<string, string | Buffer>,
  message = 'seed',
  from?: string,
): string {
  const index = path.join(repo, `seed-index-${process.pid}`);
  const env = { GIT_INDEX_FILE: index };
  const run = (args: string[], input?: string | Buffer) =>
    execFileSync('git', args, { cwd: repo, env: { ...gitEnv, ...env }, input, maxBuffer: 512 * 1024 * 1024 })
      .toString('utf8')
      .trim();
  let parent: string | null = null;
  try {
    parent = run(['rev-parse', '--verify', '-q', `refs/heads/${branch}`]);
  } catch {
    parent = from ? run(['rev-parse', '--verify', `refs/heads/${from}`]) : null;
  }
  fs.rmSync(index, { force: true });
  if (parent) run(['read-tree', parent]);
  for (const [p, content] of Object.entries(files)) {
    const blob = run(['hash-object', '-w', '--stdin'], content);
    run(['update-index', '--add', '--cacheinfo', `100644,${blob},${p}`]);
  }
  const tree = run(['write-tree']);
  const commit = run(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message]);
  run(['update-ref', `refs/heads/${branch}`, commit]);
  fs.rmSync(index, { force: true });
  return commit;
}

/** A file of a branch (or commit) as the repository holds it. */
export function showFile(repo: string, ref: string, file: string): Buffer {
  return execFileSync('git', ['cat-file', 'blob', `${ref}:${file}`], {
    cwd: repo,
    env: gitEnv,
    maxBuffer: 512 * 1024 * 1024,
  });
}

export function headOf(repo: string, branch: string): string {
  return git(repo, ['rev-parse', `refs/heads/${branch}`]).trim();
}

export function commitMessage(repo: string, ref: string): string {
  return git(repo, ['log', '-1', '--format=%B', ref]).trim();
}
