// The benches' percentile and millisecond figure (bench:latency and the benches that share its runs).

/** The p-th percentile of `values` (nearest rank), NaN when there are none. */
export function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
}
export const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
