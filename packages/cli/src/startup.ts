import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A long-running command (`serve`, `worker`) is ready: V8's young generation may grow again as
 * the work needs it (bin/sluice.mjs held it at its initial size during start-up). 2 is V8's
 * default growth factor.
 *
 * Then one full garbage collection: start-up leaves garbage that an idle process may keep for
 * minutes, since V8 collects the old generation only when it grows, e.g. the 9.4 MB buffer the
 * embedded store's WebAssembly was compiled from (docs/benchmarks.md, Memory). `--expose-gc`
 * applies to contexts created after it is set, so the collector is taken from a new one.
 */
export function startupDone() {
  v8.setFlagsFromString('--semi-space-growth-factor=2');
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  v8.setFlagsFromString('--no-expose-gc');
  gc();
}
