import { printTable } from '../io';
import type { Run, RunLog, RunStep } from './pipelines-shared';

// Readable forms of runs, steps and log lines (runs list, runs watch, pipelines execute).

export const TERMINAL = ['succeeded', 'failed', 'canceled'] as const;
export const isTerminal = (run: Run) => (TERMINAL as readonly string[]).includes(run.state);

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** From `started` to `finished`, or to now while it still runs; null before it started. */
export function elapsed(started: string | null, finished: string | null, now: number): string {
  if (!started) return '-';
  return formatDuration((finished ? Date.parse(finished) : now) - Date.parse(started));
}

/** One line per step: state, rows in/out, bytes in/out, elapsed, and the error of a failed step. */
export function stepLine(step: RunStep, slugWidth: number, now: number): string {
  const parts = [
    `  ${step.step_slug.padEnd(slugWidth)}`,
    step.state.padEnd(9),
    `rows in ${step.rows_in} out ${step.rows_out}`,
    `bytes in ${formatBytes(step.bytes_in)} out ${formatBytes(step.bytes_out)}`,
    elapsed(step.started_at, step.finished_at, now),
  ];
  if (step.error) parts.push(`${step.error.code}: ${step.error.message}`);
  return parts.join('  ');
}

/** The run's own line: slug, pipeline, environment, state, attempt, elapsed, error. */
export function runLine(run: Run, now: number): string {
  const parts = [
    `run ${run.slug}`,
    `${run.pipeline_slug} in ${run.environment_slug}`,
    run.state,
    `attempt ${run.attempt}`,
    elapsed(run.started_at, run.finished_at, now),
  ];
  if (run.error) parts.push(`${run.error.code}: ${run.error.message}`);
  return parts.join('  ');
}

export function stepLines(run: Run, now: number): string[] {
  const width = Math.max(0, ...run.steps.map((s) => s.step_slug.length));
  return run.steps.map((s) => stepLine(s, width, now));
}

/** A log line as it arrives: time of day (UTC), level, step (or "run"), message. */
export function logLine(log: RunLog): string {
  return `${log.at.slice(11, 23)} ${log.level.padEnd(5)} ${log.step_slug ?? 'run'}: ${log.message}`;
}

/** Rows written by a run: the rows its sink steps wrote (a source's or transform's rows are not). */
export const rowsWritten = (run: Run, sinkSteps: ReadonlySet<string>) =>
  run.steps.reduce((n, s) => n + (sinkSteps.has(s.step_slug) ? s.rows_out : 0), 0);

/** `sinks(run)` names the sink steps of the run's version (runs-list.ts reads them from its spec). */
export function printRunTable(runs: Run[], sinks: (run: Run) => ReadonlySet<string> | null) {
  printTable(runs, [
    { header: 'SLUG', value: (r) => r.slug },
    { header: 'PIPELINE', value: (r) => r.pipeline_slug },
    { header: 'STATE', value: (r) => r.state },
    { header: 'TRIGGER', value: (r) => r.trigger },
    { header: 'ATTEMPT', value: (r) => String(r.attempt) },
    { header: 'CREATED', value: (r) => r.created_at },
    {
      header: 'DURATION',
      value: (r) => (r.started_at ? elapsed(r.started_at, r.finished_at, Date.now()) : null),
    },
    {
      header: 'ROWS WRITTEN',
      value: (r) => {
        const s = sinks(r);
        return s ? String(rowsWritten(r, s)) : null;
      },
    },
    { header: 'ERROR', value: (r) => r.error?.code },
  ]);
}
