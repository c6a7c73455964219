/**
 * Where a trivial run's time goes, from a statement log (`BENCH_STATEMENT_LOG=file` with
 * `BENCH_PHASES=one`, bench/statement-counter.mjs): each worker's runs are followed statement by
 * statement (the claiming fetch, the source's open, the sink's first message, the ledger row, the
 * end's `begin`, whose time is the run's `finished_at`), each matched to the API's execute
 * statement before it, and the median of every step is printed. With a directory of the workers'
 * CPU profiles (`BENCH_CPU_PROF=dir` in the same invocation), it also prints what the workers ran
 * between the fetch's answer and the source's `BEGIN` (their JavaScript on the run's path), cut out
 * by the log's clock line. The statements are recognised by their text (the queue's fetch, the
 * PostgreSQL source's and sink's own statements): a change to those texts needs one here.
 *
 * With `--after-execute=FROM-TO` (ms), the runs are not followed: the profiles are cut to that
 * window after each execute the bench logged (`bench execute` lines, worker-process.ts), for a
 * run of any pipeline (bench:pipeline, bench:mariadb with `BENCH_CPU_PROF`).
 *
 *   npx tsx bench/statement-timeline.ts LOG [PROFILE_DIR] [SKIP=10] [--after-execute=FROM-TO]
 */
import fs from 'node:fs';
import path from 'node:path';
import { pct } from './latency-runs';

const args = process.argv.slice(2);
const afterExecute = args
  .find((a) => a.startsWith('--after-execute='))
  ?.slice('--after-execute='.length)
  .split('-')
  .map(Number);
const [logFile, profileDir, skipArg] = args.filter((a) => !a.startsWith('--'));
if (
  !logFile ||
  (afterExecute && (!profileDir || afterExecute.length !== 2 || !afterExecute.every(Number.isFinite)))
) {
  console.error(
    'usage: npx tsx bench/statement-timeline.ts LOG [PROFILE_DIR] [SKIP] [--after-execute=FROM-TO]',
  );
  process.exit(2);
}
/** The first runs (a cold worker's) left out of the medians. */
const SKIP = Number(skipArg ?? 10);

type Line = { pid: string; db: string; at: number; session: string; text: string };
const lines: Line[] = fs
  .readFileSync(logFile, 'utf8')
  .split('\n')
  .map((l) => l.split('\t'))
  .filter((f) => f.length >= 5)
  .map(([pid, db, at, session, text]) => ({ pid, db, at: Number(at), session, text }));

const byPid = new Map<string, Line[]>();
for (const l of lines) {
  const own = byPid.get(l.pid);
  if (own) own.push(l);
  else byPid.set(l.pid, [l]);
}

/** When the answer to the statement at `i` of `own` came (its `done` line on the same session). */
function answered(own: Line[], i: number): number {
  for (let j = i + 1; j < own.length; j++)
    if (own[j].session === own[i].session && own[j].text.startsWith('  done')) return own[j].at;
  return Number.NaN;
}

const isExecute = (t: string) => t.startsWith('with t as');
const apiPid = [...byPid].find(([, own]) => own.some((l) => isExecute(l.text)))?.[0];
const executes: { sent: number; done: number }[] = [];
for (const [i, l] of (byPid.get(apiPid ?? '') ?? []).entries())
  if (isExecute(l.text)) executes.push({ sent: l.at, done: answered(byPid.get(apiPid!)!, i) });

/** A run's moments (ms, the log's clock) by name, and the worker that ran it. */
type Run = { pid: string; t: Record<string, number> };
const runs: Run[] = [];
for (const [pid, own] of byPid) {
  if (pid === apiPid || pid === 'bench') continue;
  let run: Run['t'] | null = null;
  for (const [i, l] of own.entries()) {
    const t = l.text;
    if (t.startsWith('with next as ( select id from pgboss')) {
      run = { fetchSent: l.at, fetchDone: answered(own, i) };
      continue;
    }
    if (!run) continue;
    if (t.startsWith('BEGIN ISOLATION') && run.sourceBegin === undefined) run.sourceBegin = l.at;
    else if (t.startsWith('FETCH FORWARD 1 ') && run.sourceOpen === undefined)
      run.sourceOpen = answered(own, i);
    else if (t.startsWith('BEGIN; SELECT to_regclass') && run.sinkBegin === undefined) {
      run.sinkBegin = l.at;
      run.sinkBeginDone = answered(own, i);
    } else if (t.includes('INSERT INTO "sluice_sink_commits"') && run.ledger === undefined) {
      run.ledger = l.at;
      run.ledgerDone = answered(own, i);
    } else if (t === 'begin' && run.ledger !== undefined && run.endBegin === undefined) run.endBegin = l.at;
    else if (t === 'commit' && run.endBegin !== undefined) {
      const execute = executes.filter((e) => e.sent < run!.fetchSent).at(-1);
      run.executeSent = execute?.sent ?? Number.NaN;
      run.executeDone = execute?.done ?? Number.NaN;
      runs.push({ pid, t: run });
      run = null;
    }
  }
}
runs.sort((a, b) => a.t.fetchSent - b.t.fetchSent);
const used = runs.slice(SKIP);
const median = (values: number[]) => pct(values.filter(Number.isFinite), 50);
const steps: [string, string, string][] = [
  ['executeSent', 'executeDone', 'the execute statement (its commit and NOTIFY)'],
  ['executeDone', 'fetchSent', 'its answer → the worker fetch sent'],
  ['fetchSent', 'fetchDone', 'the fetch that claims'],
  ['fetchDone', 'sourceBegin', "fetch answered → the source's BEGIN (worker JavaScript)"],
  ['sourceBegin', 'sourceOpen', "the source's BEGIN / DECLARE / FETCH 1"],
  ['sourceOpen', 'sinkBegin', "the source open → the sink's first message"],
  ['sinkBegin', 'sinkBeginDone', "the sink's first message"],
  ['sinkBeginDone', 'ledger', "both COPYs and the source's commit"],
  ['ledger', 'ledgerDone', 'the ledger row and COMMIT'],
  ['ledgerDone', 'endBegin', "the sink committed → the end's begin (finished_at)"],
  ['executeSent', 'endBegin', "the execute statement sent → the end's begin"],
];
/** Each profiled process's windows of the monotonic clock (µs), given it and a wall→monotonic map. */
type Spans = (pid: string, mono: (wall: number) => number) => (readonly [number, number])[];

if (afterExecute) {
  const [from, to] = afterExecute;
  const sent = lines.filter((l) => l.pid === 'bench' && l.db === 'execute').map((l) => l.at);
  printWindows(
    profileDir!,
    (_pid, mono) => sent.map((at) => [mono(at + from), mono(at + to)] as const),
    `${from}–${to} ms after each of the ${sent.length} executes`,
  );
} else {
  console.log(`${runs.length} runs followed, the first ${Math.min(SKIP, runs.length)} left out; medians:`);
  for (const [from, to, label] of steps)
    console.log(
      `${median(used.map((r) => r.t[to] - r.t[from]))
        .toFixed(1)
        .padStart(7)} ms  ${label}`,
    );
  if (profileDir)
    printWindows(
      profileDir,
      (pid, mono) =>
        used
          .filter((r) => r.pid === pid && Number.isFinite(r.t.fetchDone) && Number.isFinite(r.t.sourceBegin))
          .map((r) => [mono(r.t.fetchDone), mono(r.t.sourceBegin)] as const),
      "from the fetch's answer to the source's BEGIN",
    );
}

/** CPU-profile samples of each profiled process inside its windows, by function. */
function printWindows(dir: string, spansOf: Spans, what: string) {
  // The clock line of each process: its wall clock beside its monotonic one (µs), as profiles use.
  const clocks = new Map<string, { wall: number; mono: number }>();
  for (const l of lines) if (l.db === 'clock') clocks.set(l.pid, { wall: l.at, mono: Number(l.session) });
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let windows = 0;
  let windowUs = 0;
  let idleUs = 0;
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const pid = file.split('.')[3];
    const clock = clocks.get(pid);
    if (!clock) continue;
    const mono = (wall: number) => (wall - clock.wall) * 1000 + clock.mono;
    const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    // The windows as far as this profile covers them (an execute of another worker's run lies
    // outside it; a window may outlast the worker).
    const spans = spansOf(pid, mono)
      .map(([a, b]) => [Math.max(a, profile.startTime), Math.min(b, profile.endTime)] as const)
      .filter(([a, b]) => a < b);
    if (spans.length === 0) continue;
    windows += spans.length;
    for (const [a, b] of spans) windowUs += b - a;
    type Node = {
      id: number;
      callFrame: { functionName: string; url: string; lineNumber: number };
      children?: number[];
    };
    const nodes = new Map<number, Node>(profile.nodes.map((n: Node) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of nodes.values()) for (const c of n.children ?? []) parent.set(c, n.id);
    const name = (n: Node) =>
      `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
    let at = profile.startTime as number;
    let k = 0;
    for (let i = 0; i < profile.samples.length; i++) {
      at += profile.timeDeltas[i];
      while (k < spans.length && spans[k][1] < at) k++;
      if (k >= spans.length) break;
      if (at < spans[k][0]) continue;
      const node = nodes.get(profile.samples[i])!;
      const us = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i];
      if (node.callFrame.functionName === '(idle)') {
        idleUs += us;
        continue;
      }
      self.set(name(node), (self.get(name(node)) ?? 0) + us);
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
        const n = name(nodes.get(id)!);
        if (seen.has(n)) continue;
        seen.add(n);
        inclusive.set(n, (inclusive.get(n) ?? 0) + us);
      }
    }
  }
  if (windows === 0) {
    console.log('no profile matched a worker of the log (each profile is named by its process id)');
    return;
  }
  const per = (us: number) => `${(us / windows / 1000).toFixed(3)} ms`;
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `  ${per(us).padStart(10)}  ${k}`);
  console.log(
    `\n${windows} windows ${what}, ${per(windowUs)} each (${per(idleUs)} of it idle), under the profiler:`,
  );
  console.log('by function, its own time:');
  for (const l of top(self, 20)) console.log(l);
  console.log('by function, with what it called:');
  for (const l of top(inclusive, 40)) console.log(l);
}
