import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshStore } from './fresh-store';

// The real CLI as a child process, exactly as a user runs it (`node packages/cli/bin/sluice.mjs`).
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(repoRoot, 'packages/cli/bin/sluice.mjs');

export type CliResult = {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
};

/** The environment a child sees: this process's, minus anything that would choose a store or token. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const key of Object.keys(base)) {
    if (key.startsWith('SLUICE_') || key === 'DATABASE_URL') delete base[key];
  }
  // No login profile of the person running the tests leaks in (tests that want one set their own).
  const noProfile = path.join(os.tmpdir(), 'sluice-cli-tests-no-profile');
  return { ...base, SLUICE_LOG_LEVEL: 'warn', SLUICE_CONFIG_DIR: noProfile, ...env } as NodeJS.ProcessEnv;
}

export type CliProcess = {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `re` on stdout; rejects if the process ends first. */
  waitForStdout(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exited: Promise<CliResult>;
};

export function startCli(
  args: string[],
  opts: { env?: Record<string, string | undefined>; input?: string; node?: string } = {},
) {
  // `node`: another Node.js binary than this one (the Node 24 smoke suite).
  const child = spawn(opts.node ?? process.execPath, [bin, ...args], {
    cwd: repoRoot,
    env: childEnv(opts.env ?? {}),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => {
    out += c.toString();
  });
  child.stderr.on('data', (c) => {
    err += c.toString();
  });
  child.stdin.end(opts.input ?? '');
  const exited = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout: out, stderr: err }));
  });
  const proc: CliProcess = {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForStdout(re, ms = 90_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            cleanup();
            resolve(m);
          }
        };
        const onExit = () => {
          cleanup();
          reject(new Error(`sluice exited before printing ${re}:\n${out}\n${err}`));
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${re}:\n${out}\n${err}`));
        }, ms);
        const cleanup = () => {
          clearTimeout(timer);
          child.stdout.off('data', check);
          child.off('close', onExit);
        };
        child.stdout.on('data', check);
        child.on('close', onExit);
        check();
        if (child.exitCode !== null || child.signalCode !== null) onExit();
      });
    },
  };
  return proc;
}

/** Runs one command to its end. */
export function runCli(
  args: string[],
  opts: { env?: Record<string, string | undefined>; input?: string; node?: string } = {},
): Promise<CliResult> {
  return startCli(args, opts).exited;
}

/**
 * A fresh store of the project's kind for CLI processes. On a PostgreSQL server the data
 * directory still receives the generated master key, so it gets a temporary one too (otherwise
 * `./.sluice` of the repository).
 */
export async function storeForCli(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const store = await freshStore();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cli-'));
  return {
    env: { SLUICE_DATA_DIR: dir, ...store.env },
    async drop() {
      await store.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
