import type { Deps } from '../context';
import { recoverExpiredRuns } from '../modules/runs/run-lifecycle.service';
import type { JobHandler } from './queue';
import { removeStaleRunTmpDirs } from './run-tmp';

// Finds runs whose worker stopped heartbeating and recovers them (see recoverExpiredRuns).

const BATCH = 50;

export async function sweepExpiredRuns(deps: Deps): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await recoverExpiredRuns(deps, BATCH);
    total += n;
    if (n < BATCH) return total;
  }
}

export const sweepRuns =
  (deps: Deps): JobHandler<'pipelines.sweep'> =>
  async () => {
    await sweepExpiredRuns(deps);
  };

/**
 * Every worker also sweeps on start and once per lease length, so a lost run is picked up within
 * about two lease lengths rather than at the next minute of the cron. SKIP LOCKED makes
 * concurrent sweeps of several workers safe.
 */
export async function startRunSweeper(deps: Deps) {
  // Temp directories of runs whose worker was killed on this machine (run-tmp.ts).
  const removed = await removeStaleRunTmpDirs();
  if (removed > 0) deps.log.info({ removed }, 'removed run temp directories of dead workers');
  const sweep = () =>
    sweepExpiredRuns(deps).catch((err) =>
      deps.log.warn({ errCode: (err as { code?: string }).code }, 'run sweep failed'),
    );
  await sweep();
  const timer = setInterval(sweep, deps.config.runs.leaseSeconds * 1000);
  timer.unref();
  deps.queue.onStop(async () => clearInterval(timer));
}
