// bench:scale's summary (bench/latency.bench.ts --scale-out): runs/min and cost per run by worker
// count over every round, the issue 26 item 3 target, and this checkout against a baseline build.
// Two figures per measurement (docs/scaling.md "Simulated many-host workers"): `cold`, the first
// runs of freshly started worker processes, and `steady`, the runs right after on the same
// processes, once each has compiled its run path and warmed its connections. The target is judged
// on `steady`: a deployment's workers run for hours, and what a fresh process pays once (V8's
// compiling, its backends' caches) is a cost per process start, which the cold figure shows
// spread over however many runs the bench counts (150 a worker at 4, 600 at 1).

/** What one build's runs at one worker count added up to, over every round. */
export type ScaleTotals = {
  runs: number;
  ms: number;
  /** CPU of the platform database's backends, ms. */
  store: number;
  /** Statements on the platform database. */
  stmts: number;
  /** CPU of the worker processes, ms. */
  worker: number;
  /** CPU of every process of the runs: workers, this process (API host), both databases' backends, ms. */
  all: number;
  /** Queue fetches that took no job. */
  empty: number;
  /** Notifications the workers heard. */
  heard: number;
  /** runs/min of each round, in order. */
  rounds: number[];
};

export type ScaleFigure = 'cold' | 'steady';
/** Totals by figure, then build (`baseline`, `this`), then worker count. */
export type ScaleBook = Map<ScaleFigure, Map<string, Map<number, ScaleTotals>>>;

export function scaleBook(builds: string[]): ScaleBook {
  return new Map((['cold', 'steady'] as const).map((f) => [f, new Map(builds.map((b) => [b, new Map()]))]));
}

/** Adds one measurement of `runs` runs in `ms` to the book. */
export function addToBook(
  book: ScaleBook,
  figure: ScaleFigure,
  build: string,
  n: number,
  m: Omit<ScaleTotals, 'rounds'>,
) {
  const byN = book.get(figure)!.get(build)!;
  const t = byN.get(n) ?? {
    runs: 0,
    ms: 0,
    store: 0,
    stmts: 0,
    worker: 0,
    all: 0,
    empty: 0,
    heard: 0,
    rounds: [],
  };
  byN.set(n, {
    runs: t.runs + m.runs,
    ms: t.ms + m.ms,
    store: t.store + m.store,
    stmts: t.stmts + m.stmts,
    worker: t.worker + m.worker,
    all: t.all + m.all,
    empty: t.empty + m.empty,
    heard: t.heard + m.heard,
    rounds: [...t.rounds, (m.runs / m.ms) * 60_000],
  });
}

const ms = (v: number) => `${v.toFixed(1)} ms`;
const TITLES: Record<ScaleFigure, string> = {
  cold: 'COLD: the first runs of freshly started worker processes (each compiles its run path and warms its backends meanwhile)',
  steady: 'STEADY: the runs right after, on the same processes (the figure the target is judged on)',
};

/**
 * Prints, per figure and build (`baseline` when `baseline` names one, then `this`), the table by
 * worker count and the target of 4 (and the most) workers ≥ 0.95 × 1 worker's runs/min, with the
 * ratio of each round (1 and 4 workers of round r) beside the one over all rounds; then, with a
 * baseline, this checkout ÷ baseline per worker count.
 */
export function printScaleTotals(book: ScaleBook, counts: number[], baseline: string) {
  for (const figure of ['cold', 'steady'] as const) {
    const totals = book.get(figure)!;
    console.log(`\n  ${TITLES[figure]}`);
    const rates = new Map<string, Map<number, number>>();
    for (const [build, byN] of totals) {
      const perMinute = new Map([...byN].map(([n, t]) => [n, (t.runs / t.ms) * 60_000]));
      rates.set(build, perMinute);
      const one = perMinute.get(1);
      if (baseline) console.log(`  ${build === 'baseline' ? `baseline (${baseline})` : 'this checkout'}:`);
      console.log(
        '  workers   runs/min   × 1 worker   store CPU/run   platform statements/run   worker CPU/run   all CPU/run   empty fetches/run   notifications heard/run   runs/min by round',
      );
      for (const [n, rate] of [...perMinute].sort((a, b) => a[0] - b[0])) {
        const t = byN.get(n)!;
        console.log(
          `  ${String(n).padStart(7)} ${rate.toFixed(0).padStart(10)} ${(one ? (rate / one).toFixed(2) : '—').padStart(12)} ` +
            `${ms(t.store / t.runs).padStart(15)} ${(t.stmts / t.runs).toFixed(2).padStart(25)} ${ms(t.worker / t.runs).padStart(16)} ${ms(t.all / t.runs).padStart(13)} ` +
            `${(t.empty / t.runs).toFixed(2).padStart(19)} ${(t.heard / t.runs).toFixed(2).padStart(25)}   ` +
            t.rounds.map((r) => r.toFixed(0)).join(' / '),
        );
      }
      for (const most of new Set([4, Math.max(...counts)])) {
        if (!one || most === 1 || !perMinute.has(most)) continue;
        const ratio = perMinute.get(most)! / one;
        const ones = byN.get(1)!.rounds;
        const byRound = byN
          .get(most)!
          .rounds.map((r, i) => (r / ones[i]!).toFixed(2))
          .join(' / ');
        const judged = figure === 'steady' ? (ratio >= 0.95 ? 'met' : 'MISSED') : '(printed, not judged)';
        // What the load of other sessions moves least: the CPU a run costs all its processes. On
        // cores the runs saturate, runs/min goes as its inverse.
        const cpu = byN.get(1)!.all / byN.get(1)!.runs / (byN.get(most)!.all / byN.get(most)!.runs);
        console.log(
          `  ${figure} ${most} workers ÷ 1 worker's runs/min → ${ratio.toFixed(2)} over all rounds (by round ${byRound}); ` +
            `target ≥ 0.95: ${judged}; 1 worker's CPU per run ÷ ${most} workers' ${cpu.toFixed(2)}`,
        );
      }
    }
    if (!baseline) continue;
    console.log(
      `  ${figure}: this checkout ÷ baseline, per worker count (runs/min; store CPU/run; worker CPU/run):`,
    );
    for (const n of counts) {
      const a = totals.get('baseline')!.get(n)!;
      const b = totals.get('this')!.get(n)!;
      console.log(
        `  ${String(n).padStart(7)}   ${(rates.get('this')!.get(n)! / rates.get('baseline')!.get(n)!).toFixed(2)}; ` +
          `${(b.store / b.runs / (a.store / a.runs)).toFixed(2)}; ${(b.worker / b.runs / (a.worker / a.runs)).toFixed(2)}`,
      );
    }
  }
}
