import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * On a PostgreSQL server (a worker, or `serve` on one), the old generation may grow to four times
 * what the last full collection kept before the next one starts (V8's largest own factor). V8
 * chooses the factor from its speed estimates, and in a worker of ~23 MB that had just copied
 * rows it sometimes left so little room that one full collection followed another through a whole
 * copy: 7–10 of them in a 1M-row PostgreSQL → PostgreSQL run, +0.3 s of the worker's CPU on the
 * cores the databases need, the run at 0.76–0.83 of the limit instead of ~0.9. Twice the kept heap
 * was enough there but cost the DuckDB path (warm 0.77 → 0.71 of `\copy`); four times helps both
 * (docs/benchmarks.md, "A worker's full collections"). The embedded store keeps V8's choice: its
 * `serve` is held to 150 MB.
 */
function oldGenerationRoomFourfold() {
  v8.setFlagsFromString('--heap-growing-percent=300');
}

/**
 * A long-running command (`serve`, `worker`) is ready: V8's young generation may grow again as
 * the work needs it (bin/sluice.mjs held it at its initial size during start-up). 2 is V8's
 * default growth factor.
 *
 * On the embedded store, then one full garbage collection: the 9.4 MB buffer PGlite compiled
 * its WebAssembly from is garbage, but an idle process may keep it for good, since V8 collects
 * the old generation only as it grows (docs/benchmarks.md, Memory). On a PostgreSQL server there
 * is no such buffer and the collection cost a few MB (its threads' malloc arenas), so it is
 * skipped. `--expose-gc` applies to contexts created after it is set: the collector is taken
 * from a new one. That one collection also compacts the old generation: start-up leaves its
 * pages part-filled (46 MB committed for 38 MB of objects), and an idle process never collects
 * again to compact them; compacting once holds ~7 MB less for good, at a transient peak while
 * the objects move (docs/benchmarks.md, Memory). It also drops the bytecode of every function
 * not running then (`--stress-flush-code`; V8 otherwise drops a function's bytecode only after
 * five collections without a call, which an idle process never reaches): start-up code that never
 * runs again, ~1 MB. A function called later compiles again on that call, once. Later
 * collections keep V8's own heuristics.
 */
export function startupDone(opts: { embeddedStore: boolean }) {
  v8.setFlagsFromString('--semi-space-growth-factor=2');
  if (!opts.embeddedStore) {
    oldGenerationRoomFourfold();
    return;
  }
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  v8.setFlagsFromString('--no-expose-gc');
  v8.setFlagsFromString('--compact-on-every-full-gc');
  v8.setFlagsFromString('--stress-flush-code');
  gc();
  v8.setFlagsFromString('--no-stress-flush-code');
  v8.setFlagsFromString('--no-compact-on-every-full-gc');
}
