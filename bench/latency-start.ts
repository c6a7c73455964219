// How a rated phase of bench:latency started (latency-runs.ts sluiceRuns): which runs were slow to
// start and what they waited for, the phase's first seconds half a second at a time, and the runs
// executed once the phase had settled. A stall of the whole path shows as its first seconds; a
// cost of single runs is spread over the phase.
import { fmt, pct } from './percentile';

/** A run as pipeline_runs holds it, its times in ms since the phase started. */
export type StartedRun = { sent: number; created: number; started: number; finished: number };

/** A run this much later than its execute to start counts as slow. */
const SLOW_START_MS = 100;
/** The start of a rated phase, while the pools open sessions for its concurrency. */
const RAMP_MS = 10_000;
/** The first seconds of the phase shown half a second at a time. */
const FIRST_MS = 3000;
const STEP_MS = 500;

export function printStart(runs: StartedRun[]) {
  const slow = runs.filter((r) => r.started - r.sent > SLOW_START_MS);
  if (slow.length > 0) {
    // When they were executed (second of the phase → how many, the slowest).
    const bySecond = new Map<number, [number, number]>();
    for (const r of slow) {
      const second = Math.floor(r.sent / 1000);
      const [k, worst] = bySecond.get(second) ?? [0, 0];
      bySecond.set(second, [k + 1, Math.max(worst, r.started - r.sent)]);
    }
    const seconds = [...bySecond].sort((a, b) => a[0] - b[0]);
    // What they waited for: the API to insert the run (execute → the run's row), or a worker to
    // take it from the queue (the row → started).
    const api = slow.map((r) => r.created - r.sent);
    const queued = slow.map((r) => r.started - r.created);
    console.log(
      `  runs slower than ${SLOW_START_MS} ms to start: ${slow.length} of ${runs.length}, executed in second ` +
        seconds.map(([sec, [k, worst]]) => `${sec} (${k}, at most ${fmt(worst)})`).join(', ') +
        `; they waited for the API (execute → the run's row) p50 ${fmt(pct(api, 50))}, ` +
        `for a worker (the row → started) p50 ${fmt(pct(queued, 50))}, at most ${fmt(Math.max(...queued))}`,
    );
  }
  // Half a second at a time: runs started, how long they ran (started → finished), and the most
  // runs in flight at the steps' 100 ms marks. A slow first wave holding every slot is a start
  // stall; the backlog it leaves drains at the machine's capacity.
  const started: number[] = [];
  const ran: string[] = [];
  const inFlight: number[] = [];
  for (let from = 0; from < FIRST_MS; from += STEP_MS) {
    const here = runs.filter((r) => r.started >= from && r.started < from + STEP_MS);
    started.push(here.length);
    const times = here.map((r) => r.finished - r.started);
    ran.push(times.length > 0 ? pct(times, 50).toFixed(0) : '–');
    let most = 0;
    for (let t = from; t < from + STEP_MS; t += 100)
      most = Math.max(most, runs.filter((r) => r.started <= t && r.finished > t).length);
    inFlight.push(most);
  }
  console.log(
    `  the first ${FIRST_MS / 1000} s, half a second at a time: runs started ${started.join(' / ')}; ` +
      `their run time (started → finished) p50 ${ran.join(' / ')} ms; in flight at most ${inFlight.join(' / ')}`,
  );
  const settled = runs.filter((r) => r.sent >= RAMP_MS).map((r) => r.finished - r.sent);
  if (settled.length > 0) {
    console.log(
      `  the runs executed after the first ${RAMP_MS / 1000} s (${settled.length}): execute→finished ` +
        `p50 ${fmt(pct(settled, 50))} p99 ${fmt(pct(settled, 99))}`,
    );
  }
}
