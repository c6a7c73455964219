import type { Logger } from 'pino';

// Work a process repeats on its own timer, beside the queue (the trigger tick, the run lease
// sweep; docs/architecture.md#background-work). A slow tick never overlaps itself: a tick that
// comes due while the last one still runs is skipped. Stopping waits for the tick in progress,
// so none reaches a store that is about to close.

export type Periodic = {
  /** Runs a tick now, or joins the one in progress; resolves when it has ended. */
  runNow(): Promise<void>;
  /** No more ticks; resolves once the tick in progress (if any) has ended. */
  stop(): Promise<void>;
};

export type PeriodicOptions = {
  /** Names the work in log lines. */
  name: string;
  everyMs: number;
  run: () => Promise<unknown>;
  log: Pick<Logger, 'warn'>;
};

export function startPeriodic({ name, everyMs, run, log }: PeriodicOptions): Periodic {
  let current: Promise<void> | null = null;
  let stopped = false;
  const tick = (): Promise<void> => {
    if (current) return current;
    if (stopped) return Promise.resolve();
    const once = async () => {
      try {
        await run();
      } catch (err) {
        // The code and class only: a driver's message can quote the values of a statement.
        const { code, name: errName } = (err ?? {}) as { code?: unknown; name?: unknown };
        log.warn({ errCode: code, errName }, `${name} failed`);
      }
    };
    // A reaction, so it runs after `current` is set even when `run` throws at once.
    current = once().finally(() => {
      current = null;
    });
    return current;
  };
  const timer = setInterval(tick, everyMs);
  // The process may exit between ticks; its stop hooks end the work that is in progress.
  timer.unref();
  return {
    runNow: tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}
