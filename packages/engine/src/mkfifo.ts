import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { lstat } from 'node:fs/promises';

// Named pipes come from the mkfifo command (Node has none, fifos.ts). Starting a process from
// this one holds the event loop while the kernel copies this process's memory map: 17–30 ms in
// a worker holding DuckDB, at whatever moment of a run the pipes are made (docs/benchmarks.md).
// So a shell of our own, started once while the process is small, takes the paths on its
// standard input and runs mkfifo itself: a making then costs this process a write and a line
// back. Without the shell (it could not start, or it ended), each making starts mkfifo itself.

/**
 * Reads paths one a line; an empty line makes the paths read since the last one with one
 * mkfifo and answers `y` (all made) or `n`.
 */
const SCRIPT =
  'set --; while IFS= read -r p; do if [ -z "$p" ]; then if mkfifo -m 600 -- "$@" 2>/dev/null; then echo y; else echo n; fi; set --; else set -- "$@" "$p"; fi; done';

/** A making's answer: made, not made, or null when the shell went away before answering. */
type Answer = boolean | null;
type Maker = { proc: ChildProcess; waiting: ((made: Answer) => void)[]; text: string };

let maker: Maker | null = null;
/** The shell could not start or ended: every making starts mkfifo itself from now on. */
let broken = false;

const direct = (paths: string[]) =>
  new Promise<boolean>((resolve) =>
    execFile('mkfifo', ['-m', '600', '--', ...paths], (err) => resolve(!err)),
  );

/** Holds the process open only while a making waits for its answer. */
function hold(m: Maker, on: boolean) {
  const handles = [m.proc, m.proc.stdin, m.proc.stdout] as ({ ref(): void; unref(): void } | null)[];
  for (const h of handles) on ? h?.ref() : h?.unref();
}

/** Starts the shell (a no-op once started): early, while this process is still small. */
export function startPipeMaker(): void {
  if (maker || broken || process.platform !== 'linux') return;
  let proc: ChildProcess;
  try {
    proc = spawn('sh', ['-c', SCRIPT], { stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    broken = true;
    return;
  }
  const m: Maker = { proc, waiting: [], text: '' };
  const gone = () => {
    broken = true;
    if (maker === m) maker = null;
    for (const answer of m.waiting.splice(0)) answer(null);
  };
  proc.on('error', gone);
  proc.on('exit', gone);
  proc.stdin?.on('error', gone);
  proc.stdout?.setEncoding('utf8');
  proc.stdout?.on('data', (text: string) => {
    m.text += text;
    for (let nl = m.text.indexOf('\n'); nl !== -1; nl = m.text.indexOf('\n')) {
      const line = m.text.slice(0, nl);
      m.text = m.text.slice(nl + 1);
      m.waiting.shift()?.(line === 'y');
    }
    if (m.waiting.length === 0) hold(m, false);
  });
  hold(m, false);
  maker = m;
}

/** The shell's process id while it runs (tests end it to see the fallback). */
export const pipeMakerPid = () => maker?.proc.pid ?? null;

/** Makes named pipes at `paths` (mode 600); resolves with whether all were made. */
export async function mkfifo(paths: string[]): Promise<boolean> {
  if (paths.length === 0) return true;
  startPipeMaker();
  const m = maker;
  // A path the line protocol cannot carry goes the direct way.
  if (!m || paths.some((p) => p === '' || p.includes('\n'))) return direct(paths);
  const answer = await new Promise<Answer>((resolve) => {
    m.waiting.push(resolve);
    hold(m, true);
    m.proc.stdin?.write(`${paths.join('\n')}\n\n`);
  });
  if (answer !== null) return answer;
  // The shell went away with the paths: it may have made them before it went.
  if (await direct(paths)) return true;
  const there = await Promise.all(
    paths.map((p) =>
      lstat(p).then(
        (s) => s.isFIFO(),
        () => false,
      ),
    ),
  );
  return there.every(Boolean);
}
