// bench:scale's summary (bench/latency.bench.ts --scale-out): runs/min and cost per run by worker
// count over every round, the issue 26 item 3 target, and this checkout against a baseline build.

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
  /** Queue fetches that took no job. */
  empty: number;
  /** Notifications the workers heard. */
  heard: number;
};

const ms = (v: number) => `${v.toFixed(1)} ms`;

/**
 * Prints, per build (`baseline` when `baseline` names one, then `this`), the table by worker count
 * and the target of 4 (and the most) workers ≥ 0.95 × 1 worker's runs/min; then, with a baseline,
 * this checkout ÷ baseline per worker count.
 */
export function printScaleTotals(
  totals: Map<string, Map<number, ScaleTotals>>,
  counts: number[],
  baseline: string,
) {
  const rates = new Map<string, Map<number, number>>();
  for (const [build, byN] of totals) {
    const perMinute = new Map([...byN].map(([n, t]) => [n, (t.runs / t.ms) * 60_000]));
    rates.set(build, perMinute);
    const one = perMinute.get(1);
    if (baseline) console.log(`  ${build === 'baseline' ? `baseline (${baseline})` : 'this checkout'}:`);
    console.log(
      '  workers   runs/min   × 1 worker   store CPU/run   platform statements/run   worker CPU/run   empty fetches/run   notifications heard/run',
    );
    for (const [n, rate] of [...perMinute].sort((a, b) => a[0] - b[0])) {
      const t = byN.get(n)!;
      console.log(
        `  ${String(n).padStart(7)} ${rate.toFixed(0).padStart(10)} ${(one ? (rate / one).toFixed(2) : '—').padStart(12)} ` +
          `${ms(t.store / t.runs).padStart(15)} ${(t.stmts / t.runs).toFixed(2).padStart(25)} ${ms(t.worker / t.runs).padStart(16)} ` +
          `${(t.empty / t.runs).toFixed(2).padStart(19)} ${(t.heard / t.runs).toFixed(2).padStart(25)}`,
      );
    }
    for (const most of new Set([4, Math.max(...counts)])) {
      if (!one || most === 1 || !perMinute.has(most)) continue;
      const ratio = perMinute.get(most)! / one;
      console.log(
        `  target: ${most} workers ≥ 0.95 × 1 worker's runs/min → ${ratio.toFixed(2)} ${ratio >= 0.95 ? 'met' : 'MISSED'}`,
      );
    }
  }
  if (!baseline) return;
  console.log('  this checkout ÷ baseline, per worker count (runs/min; store CPU/run; worker CPU/run):');
  for (const n of counts) {
    const a = totals.get('baseline')!.get(n)!;
    const b = totals.get('this')!.get(n)!;
    console.log(
      `  ${String(n).padStart(7)}   ${(rates.get('this')!.get(n)! / rates.get('baseline')!.get(n)!).toFixed(2)}; ` +
        `${(b.store / b.runs / (a.store / a.runs)).toFixed(2)}; ${(b.worker / b.runs / (a.worker / a.runs)).toFixed(2)}`,
    );
  }
}
