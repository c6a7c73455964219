import v8 from 'node:v8';

/**
 * A long-running command (`serve`, `worker`) is ready: V8's young generation may grow again as
 * the work needs it (bin/sluice.mjs held it at its initial size during start-up). 2 is V8's
 * default growth factor.
 */
export function startupDone() {
  v8.setFlagsFromString('--semi-space-growth-factor=2');
}
