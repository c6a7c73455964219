// bench:history's figures (history.bench.ts): percentiles and the p99 ratio's resampled interval,
// and where a slow request's time went. Importing this module starts observing this process's
// garbage collections and wraps pg.Client's query to time every round trip.
import { PerformanceObserver } from 'node:perf_hooks';
import pg from 'pg';
import { pct } from './percentile';
import type { Platform } from './pipeline-support';

export { pct };

/**
 * The 5th and 95th percentiles of the p99 ratio over resamples of both stores' requests (drawn
 * with replacement, 1,000 times, a fixed seed): with 1,000 requests a p99 is the 10th-slowest,
 * and how far it moves between invocations of the same code is what this interval shows.
 */
export function ratioInterval(e: number[], s: number[]): [number, number] {
  let x = 0x9e3779b9;
  const rnd = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const draw = (v: number[]) => Array.from(v, () => v[Math.floor(rnd() * v.length)] as number);
  const ratios: number[] = [];
  for (let b = 0; b < 1000; b++) ratios.push(pct(draw(s), 99) / pct(draw(e), 99));
  return [pct(ratios, 5), pct(ratios, 95)];
}

// Where a slow request's time went: the garbage collections of this process (both APIs and the
// bench share it) and the platform-store round trips (every pg.Client query of this process,
// timed from the call to its result) that overlap the request. Observing costs a few
// microseconds a request, on both stores alike.
type Span = { start: number; end: number };
export const gcs: (Span & { kind: number })[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    gcs.push({ start: e.startTime, end: e.startTime + e.duration, kind: (e as any).detail?.kind ?? 0 });
}).observe({ entryTypes: ['gc'] });
/** The collections between two times by kind (V8's: 1 scavenge, 2 mark-compact, 4 incremental, 8 weak callbacks). */
export function gcSummary(a: number, b: number): string {
  const by = new Map<number, number[]>();
  for (const g of gcs)
    if (g.start >= a && g.start < b) by.set(g.kind, [...(by.get(g.kind) ?? []), g.end - g.start]);
  return [...by]
    .sort((x, y) => x[0] - y[0])
    .map(
      ([k, v]) => `kind ${k}: ${v.length}× p50 ${pct(v, 50).toFixed(1)} max ${Math.max(...v).toFixed(1)} ms`,
    )
    .join(', ');
}
export const queries: Span[] = [];
const origQuery = pg.Client.prototype.query as (...a: any[]) => any;
(pg.Client.prototype as any).query = function (this: pg.Client, ...args: any[]) {
  const start = performance.now();
  const done = () => queries.push({ start, end: performance.now() });
  // The pool calls back; the ORM and the bench's own client take a promise.
  const cb = args[args.length - 1];
  if (typeof cb === 'function') {
    args[args.length - 1] = (...r: unknown[]) => {
      done();
      return cb(...r);
    };
    return origQuery.apply(this, args);
  }
  const r = origQuery.apply(this, args);
  if (r && typeof r.then === 'function') r.then(done, () => {});
  return r;
};
/** Milliseconds of `spans` inside [a, b]. */
export function within(spans: Span[], a: number, b: number): number {
  let ms = 0;
  for (const x of spans) if (x.end > a && x.start < b) ms += Math.min(b, x.end) - Math.max(a, x.start);
  return ms;
}
export type Sample = Span & { ms: number };
export type Io = { read: number; hit: number; checkpoints: number };
/** A store's blocks read (not in shared buffers) and hit so far, and the cluster's checkpoints. */
export async function io(s: { client: pg.Client }): Promise<Io> {
  await s.client.query('select pg_stat_force_next_flush()');
  const { rows } = await s.client.query(
    `select blks_read::float8 as read, blks_hit::float8 as hit,
            (select checkpoints_timed + checkpoints_req from pg_stat_bgwriter)::float8 as checkpoints
       from pg_stat_database where datname = current_database()`,
  );
  return rows[0] as Io;
}

export async function timed(
  s: { p: Platform },
  url: string,
  expect: (body: any) => void,
  into?: Sample[],
): Promise<number> {
  const t0 = performance.now();
  const body = await s.p.call('GET', url);
  const t1 = performance.now();
  const ms = t1 - t0;
  into?.push({ start: t0, end: t1, ms });
  expect(body);
  return ms;
}

/** The slowest 1% of `xs`: how many overlap a collection, and their median total / db / gc ms. */
export function tail(xs: Sample[]): string {
  const slow = [...xs].sort((a, b) => b.ms - a.ms).slice(0, Math.max(1, Math.ceil(xs.length / 100)));
  const med = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? 0;
  const gc = slow.map((x) => within(gcs, x.start, x.end));
  const db = slow.map((x) => within(queries, x.start, x.end));
  const all = xs.map((x) => within(queries, x.start, x.end));
  const paused = xs.filter((x) => within(gcs, x.start, x.end) > 0).length;
  return (
    `${slow.length} slowest: ${med(slow.map((x) => x.ms)).toFixed(1)} ms, db ${med(db).toFixed(1)}, ` +
    `gc ${med(gc).toFixed(1)} (${gc.filter((g) => g > 0).length} in a gc); all: db p50 ${med(all).toFixed(2)} p99 ${pct(all, 99).toFixed(1)}, ` +
    `${paused} of ${xs.length} in a gc`
  );
}
