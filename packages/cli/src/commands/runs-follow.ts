import { type SluiceClient, unwrap } from '@sluice/client';
import { CliError, ExitCode } from '../exit';
import type { EnvOptions, Run, RunLog } from './pipelines-shared';
import { peOf } from './pipelines-shared';
import { isTerminal, logLine, runLine, stepLines } from './runs-format';

// Following a run until it ends (runs watch, pipelines execute --wait): the run and its new log
// lines are polled; a terminal shows the steps redrawn in place, anything else gets appended
// lines, and --json one JSON object per poll.

export type DisplayMode = 'tty' | 'plain' | 'json';
export type Output = { write(text: string): unknown; columns?: number };

export function displayModeOf(json: boolean | undefined, out: { isTTY?: boolean }): DisplayMode {
  return json ? 'json' : out.isTTY ? 'tty' : 'plain';
}

export type RunDisplay = { update(run: Run, logs: RunLog[]): void };

export function runDisplay(out: Output, mode: DisplayMode, now: () => number = Date.now): RunDisplay {
  if (mode === 'json') {
    return { update: (run, logs) => out.write(`${JSON.stringify({ run, logs })}\n`) };
  }
  if (mode === 'tty') {
    let drawn = 0;
    // A wrapped line would break the count of lines to move up over.
    const fit = (line: string) =>
      out.columns && line.length >= out.columns ? `${line.slice(0, Math.max(1, out.columns - 2))}…` : line;
    return {
      update(run, logs) {
        const frame = [runLine(run, now()), ...stepLines(run, now())].map(fit);
        // Back to the top of the previous frame, clear to the end of the screen, then new log
        // lines (they scroll up and stay) and the frame again below them.
        const up = drawn > 0 ? `\x1b[${drawn}A\r\x1b[J` : '';
        out.write(`${up}${[...logs.map(logLine), ...frame].join('\n')}\n`);
        drawn = frame.length;
      },
    };
  }
  // Plain: the run line first, then a step's line whenever its state or counters change, and
  // the run line again when the run's state changes (so its outcome comes last).
  const shown = new Map<string, string>();
  let runShown: string | null = null;
  return {
    update(run, logs) {
      const lines = logs.map(logLine);
      const runKey = JSON.stringify([run.state, run.attempt, run.error]);
      const first = runShown === null;
      if (first) lines.push(runLine(run, now()));
      const steps = stepLines(run, now());
      run.steps.forEach((s, i) => {
        const key = JSON.stringify([s.state, s.rows_in, s.rows_out, s.bytes_in, s.bytes_out, s.error]);
        if (shown.get(s.step_slug) === key) return;
        shown.set(s.step_slug, key);
        lines.push(steps[i]);
      });
      if (!first && runShown !== runKey) lines.push(runLine(run, now()));
      runShown = runKey;
      if (lines.length > 0) out.write(`${lines.join('\n')}\n`);
    },
  };
}

const RUN = '/organizations/{organization}/projects/{project}/environments/{environment}/runs/{run_slug}';

/**
 * New log lines on each call. The list ends with next_cursor null, so the cursor kept is the one
 * that led to the last page: that page is read again and lines already seen are skipped by
 * their number in the run.
 */
export function logFollower(client: SluiceClient, path: ReturnType<typeof peOf> & { run_slug: string }) {
  let cursor: string | undefined;
  let lastSeq = 0;
  return async (): Promise<RunLog[]> => {
    const fresh: RunLog[] = [];
    for (;;) {
      const page = await unwrap(
        client.GET(`${RUN}/logs`, { params: { path, query: { limit: 100, order: 'asc', cursor } } }),
      );
      for (const log of page.logs) {
        if (log.seq <= lastSeq) continue;
        fresh.push(log);
        lastSeq = log.seq;
      }
      if (!page.has_more || !page.next_cursor) return fresh;
      cursor = page.next_cursor;
    }
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls the run until it is succeeded, failed or canceled; returns its final form. */
export async function followRun(
  client: SluiceClient,
  opts: EnvOptions & { runSlug: string; mode: DisplayMode; intervalMs: number; out: Output },
): Promise<Run> {
  const path = { ...peOf(opts), run_slug: opts.runSlug };
  const display = runDisplay(opts.out, opts.mode);
  const newLogs = logFollower(client, path);
  for (;;) {
    const run = await unwrap(client.GET(RUN, { params: { path } }));
    // Logs after the run: once it is terminal, every line of it is there.
    display.update(run, await newLogs());
    if (isTerminal(run)) return run;
    await sleep(opts.intervalMs);
  }
}

/** Exit 0 for a succeeded run, 1 (with the reason on stderr) for a failed or canceled one. */
export function exitForRun(run: Run) {
  if (run.state === 'succeeded') return;
  const why = run.error ? `: ${run.error.code}: ${run.error.message}` : '';
  throw new CliError(ExitCode.failed, `run ${run.slug} ${run.state}${why}`);
}

/** `--interval <seconds>` of the following commands. */
export function intervalMs(value: string | undefined): number {
  const s = Number(value ?? '1');
  if (!Number.isFinite(s) || s < 0.2 || s > 60) {
    throw new CliError(ExitCode.failed, '--interval must be a number of seconds from 0.2 to 60');
  }
  return Math.round(s * 1000);
}
