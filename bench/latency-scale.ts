// bench:scale's phase (latency.bench.ts --scale-out): runs/min and cost per run by number of
// worker processes, each its own pool, cold and steady, optionally A/B against a baseline build.

import { connectionPeaks } from './latency-probes';
import { bareBaseline, type LatencyBench, sluiceRuns } from './latency-runs';
import { loadAverages } from './pipeline-support';
import { addToBook, printScaleTotals, type ScaleFigure, scaleBook } from './scale-report';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The BENCH_SCALE_* options of latency.bench.ts (its header says what each one does). */
export type ScaleOptions = {
  counts: number[];
  runs: number;
  rows: number;
  rounds: number;
  rowRuns: number;
  warm: number;
  steadyRuns: number;
  prewarm: number;
  steadyAfter: number;
  baseline: string;
  concurrency: number;
};

/** Every worker count of `o.counts` over `o.rounds` rounds; returns the rows the copy runs wrote. */
export async function scalePhase(b: LatencyBench, o: ScaleOptions): Promise<number> {
  const { counters, perRun, costLine } = b.cost;
  let copied = 0;
  console.log(
    `\nScale-out: per worker count, fresh processes take ${o.runs} trivial runs queued at once (cold), ` +
      `then ${o.steadyRuns} more (steady); concurrency ${o.concurrency} per worker; ${o.rounds} round(s)`,
  );
  const bare = await bareBaseline(b.dst, o.runs, 0);
  const bareMs = Math.max(...bare.done);
  console.log(`  bare insert+NOTIFY → listener   ${((o.runs / bareMs) * 60_000).toFixed(0)} jobs/min`);
  // The API host in this process and the store are as fresh as the first workers: the first
  // measurement of an invocation (1 worker, round 1) also paid for compiling the execute
  // path and warming the API's and the store's caches, and ran at ~0.4 of the same count's
  // later rounds (docs/benchmarks.md, 2026-11-29 "Workers: cold and steady"). Runs of a
  // throwaway worker warm them first, uncounted.
  if (o.prewarm > 0) {
    b.workers = await b.startWorkers(1);
    await sleep(1000);
    const w = await sluiceRuns(b.p, o.prewarm, 0);
    b.expected += o.prewarm;
    console.log(
      `  the API and the store warmed first (uncounted): ${o.prewarm} runs on a throwaway worker, ` +
        `${((o.prewarm / w.wallMs) * 60_000).toFixed(0)} runs/min (load average ${loadAverages()})`,
    );
    for (const w of b.workers) await w.stop();
    b.workers = [];
  }
  // Runs and wall time per figure, build and worker count, over every round.
  const builds = o.baseline ? ['baseline', 'this'] : ['this'];
  const book = scaleBook(builds);
  const order = Array.from({ length: o.rounds }, (_, r) =>
    r % 2 === 0 ? o.counts : [...o.counts].reverse(),
  ).flat();
  // Who goes first, per worker count: alternating at each count, so an even number of
  // rounds gives each build the first place equally often at every count. (One turn counter
  // for all counts gave 1, 2, 4, 4, 2, 1, 1, 2, 4 the baseline first at 4 workers in 2 of 3
  // rounds; the store grows through an invocation, and the second went 1.1× the first's
  // store CPU at 4 workers in three invocations, docs/benchmarks.md 2026-11-29.)
  const turns = new Map<number, number>();
  /** `count` runs queued at once on the running workers, measured and added to the book. */
  const measure = async (figure: ScaleFigure, build: string, n: number, count: number) => {
    const l0 = loadAverages();
    const before = await counters(b.workers);
    const sessions = await connectionPeaks([b.store, b.dst]);
    const r = await sluiceRuns(b.p, count, 0, 'tick', b.workers);
    const peaks = await sessions.stop();
    b.expected += count;
    const l1 = loadAverages();
    const cost = await perRun(before, b.workers, count);
    addToBook(book, figure, build, n, {
      runs: count,
      ms: r.wallMs,
      store: cost.storeCpuMs * count,
      stmts: cost.platformStatements * count,
      worker: cost.workerCpuMs * count,
      all: (cost.workerCpuMs + cost.ownCpuMs + cost.storeCpuMs + cost.dataCpuMs) * count,
      empty: cost.emptyFetches * count,
      heard: cost.wakeups * count,
    });
    console.log(
      `  ${o.baseline ? `${build.padEnd(8)} ` : ''}${n} worker(s), ${figure.padEnd(6)} ${count} runs: ` +
        `${((count / r.wallMs) * 60_000).toFixed(0)} runs/min (all queued, then the workers let go: ${(r.wallMs / 1000).toFixed(1)} s to the last run's end, ` +
        `load average ${l0} → ${l1})`,
    );
    console.log(costLine(cost));
    return peaks;
  };
  for (const n of order) {
    // A/B: the two builds take turns at going first, so neither always meets the warmer store.
    const turn = turns.get(n) ?? 0;
    turns.set(n, turn + 1);
    const these = turn % 2 === 0 ? builds : [...builds].reverse();
    for (const build of these) {
      b.workers = await b.startWorkers(n, build === 'baseline' ? o.baseline : undefined);
      await sleep(1000);
      if (o.warm > 0) {
        await sluiceRuns(b.p, o.warm * n, 0);
        b.expected += o.warm * n;
      }
      const peaks = await measure('cold', build, n, o.runs);
      if (o.steadyRuns > 0) {
        // Each process as warm as one worker is after the cold runs: V8 tiers a function up
        // by its own process's calls, so 4 processes that ran 150 runs each are colder than
        // one that ran 600.
        const more = Math.max(0, (o.steadyAfter - o.warm) * n - o.runs);
        if (more > 0) {
          await sluiceRuns(b.p, more, 0);
          b.expected += more;
        }
        await measure('steady', build, n, o.steadyRuns);
      }
      if (o.rowRuns > 0) {
        const l1 = loadAverages();
        const c = await sluiceRuns(b.p, o.rowRuns, 0, 'copy');
        copied += o.rowRuns * o.rows;
        console.log(
          `  ${((o.rowRuns * o.rows) / (c.wallMs / 1000)).toFixed(0)} rows/s ` +
            `(${o.rowRuns} × ${o.rows} rows PG → PG, load average ${l1} → ${loadAverages()})`,
        );
      }
      // The bound of docs/operations.md: per worker min(pool, max(3, ⌈C / 2⌉ + 1)) platform
      // connections (workerPoolSize in packages/cli/src/commands/worker.ts) + 1 LISTEN; on a
      // data source ≤ 2 sessions per running trivial run (source and sink) + 2 × C + 2 idle.
      // The API host in this process holds its own pool beside.
      const workerPool = Math.max(3, Math.ceil(o.concurrency / 2) + 1);
      const platformBound = n * (Math.min(Number(process.env.BENCH_WORKER_POOL || 10), workerPool) + 1);
      console.log(
        `  sessions at most (cold runs): ${peaks.get(b.store) ?? 0} on the platform database (API pool ≤ 10 + workers' bound ` +
          `${platformBound}), ${peaks.get(b.dst) ?? 0} on the data database (bound ${n * (4 * o.concurrency + 2)})`,
      );
      for (const w of b.workers) await w.stop();
      b.workers = [];
    }
  }
  console.log(`  over ${o.rounds} round(s) (load average ${loadAverages()}):`);
  printScaleTotals(book, o.counts, o.baseline);
  return copied;
}
