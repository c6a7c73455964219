// Helpers of `npm run bench:memory`: a long-running process started the way a user starts it,
// awaited until it prints its ready line, then read from /proc/<pid>/status.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { repoRoot } from './pipeline-support';

/** MB (10⁶ bytes) of a `/proc/<pid>/status` field given in kB (VmRSS, VmHWM). */
export function statusMB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return (Number(m[1]) * 1024) / 1e6;
}

/** VmRSS (MB) of each process `pid` started that still runs (a `serve`'s DuckDB child). */
export function childrenMB(pid: number): number[] {
  let list = '';
  try {
    list = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  } catch {
    return [];
  }
  return list
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((c) => {
      try {
        return [statusMB(Number(c), 'VmRSS')];
      } catch {
        return [];
      }
    });
}

export type Started = {
  pid: number;
  /** Milliseconds from spawn to the ready line. */
  readyMs: number;
  /** Its standard output and error so far. */
  output(): string;
  /** Resolves with the exit code once it has exited (null: killed by a signal). */
  exited: Promise<number | null>;
  stop(): Promise<void>;
};

/**
 * Spawns `node <args>` (or, when the first argument is an executable file that is not JavaScript,
 * such as the `sluice` launcher packages/cli/bin/sluice, that file with the rest) in the
 * repository root with `env` added (SLUICE_* and DATABASE_URL of this process removed) and
 * resolves once its output contains `ready`; rejects when it exits first.
 */
export async function startProcess(
  args: string[],
  env: Record<string, string>,
  ready: string,
): Promise<Started> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(childEnv)) {
    if (key.startsWith('SLUICE_') || key === 'DATABASE_URL') delete childEnv[key];
  }
  const started = performance.now();
  const direct = args.length > 0 && !/\.[cm]?[jt]s$/.test(args[0]) && fs.existsSync(args[0]);
  const [command, argv] = direct ? [args[0], args.slice(1)] : [process.execPath, args];
  const child: ChildProcess = spawn(command, argv, {
    cwd: repoRoot,
    env: { ...childEnv, SLUICE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    out += c;
  });
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (out.includes(ready)) {
        clearInterval(timer);
        resolve();
      } else if (child.exitCode !== null || child.signalCode !== null) {
        clearInterval(timer);
        reject(new Error(`${args.join(' ')} exited before it was ready:\n${out}`));
      }
    }, 50);
  });
  const readyMs = performance.now() - started;
  return {
    pid: child.pid!,
    readyMs,
    output: () => out,
    exited,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resident memory after `settleMs` of rest: VmRSS now and the high-water mark VmHWM. */
export async function settledMemory(p: Started, settleMs: number) {
  await new Promise((r) => setTimeout(r, settleMs));
  return { rssMB: statusMB(p.pid, 'VmRSS'), hwmMB: statusMB(p.pid, 'VmHWM') };
}
