import type { Deps } from '../context';
import { tick } from '../modules/triggers/index';
import { startPeriodic } from './periodic';

// Every API host and worker runs the schedule tick on its own timer (never croner's timers).
// Claims use FOR UPDATE SKIP LOCKED, so any number of tickers share the work without doubles.

const started = new WeakSet<Deps>();

export function startTriggerTicker(deps: Deps): void {
  const seconds = deps.config.triggerTickSeconds;
  // One ticker per process and store, whether the API host, the worker or both started it.
  if (seconds <= 0 || started.has(deps)) return;
  started.add(deps);
  const ticker = startPeriodic({
    name: 'trigger tick',
    everyMs: seconds * 1000,
    run: () => tick(deps),
    log: deps.log,
  });
  deps.queue.onStop(() => ticker.stop());
}
