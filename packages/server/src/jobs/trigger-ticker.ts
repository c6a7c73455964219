import type { Deps } from '../context';
import { tick } from '../modules/triggers/trigger-tick';

// Every API host and worker runs the schedule tick on its own timer (never croner's timers).
// Claims use FOR UPDATE SKIP LOCKED, so any number of tickers share the work without doubles.

const started = new WeakSet<Deps>();

export function startTriggerTicker(deps: Deps): () => void {
  const seconds = deps.config.triggerTickSeconds;
  // One ticker per process and store, whether the API host, the worker or both started it.
  if (seconds <= 0 || started.has(deps)) return () => {};
  started.add(deps);
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    try {
      await tick(deps);
    } catch (err) {
      deps.log.warn(
        { errCode: (err as { code?: string }).code, err: (err as Error).message },
        'trigger tick failed',
      );
    } finally {
      running = false;
    }
  };
  const timer = setInterval(run, seconds * 1000);
  timer.unref();
  const stop = () => clearInterval(timer);
  deps.queue.onStop(async () => stop());
  return stop;
}
