import { z } from 'zod';
import type { Deps } from '../context';
import { recoverExpiredRuns } from '../modules/runs/index';
import { defineJob } from './define';
import { startPeriodic } from './periodic';
import { removeStaleRunTmpDirs } from './run-tmp';

// Finds runs whose worker stopped heartbeating and recovers them (see recoverExpiredRuns).

const payload = z.object({}).passthrough();

declare module './queue' {
  interface JobPayloads {
    'pipelines.sweep': typeof payload;
  }
}

const BATCH = 50;

async function sweepExpiredRuns(deps: Deps): Promise<void> {
  for (;;) {
    const n = await recoverExpiredRuns(deps, BATCH);
    if (n < BATCH) return;
  }
}

/**
 * Every minute by cron for the deployment; besides, every worker sweeps on start and once per
 * lease length (startRunSweeper), so a lost run is picked up within about two lease lengths
 * rather than at the next minute. SKIP LOCKED makes concurrent sweeps of several workers safe.
 */
export const runSweepJob = defineJob({
  name: 'pipelines.sweep',
  payload,
  policy: { retry: { limit: 0, delaySeconds: 0, backoff: false }, expireInSeconds: 120 },
  schedule: '* * * * *',
  handler: (deps) => () => sweepExpiredRuns(deps),
});

/** This worker's own sweep: once now (awaited), then once per lease length until the queue stops. */
export async function startRunSweeper(deps: Deps): Promise<void> {
  // Temp directories of runs whose worker was killed on this machine (run-tmp.ts).
  const removed = await removeStaleRunTmpDirs();
  if (removed > 0) deps.log.info({ removed }, 'removed run temp directories of dead workers');
  const sweeper = startPeriodic({
    name: 'run sweep',
    everyMs: deps.config.runs.leaseSeconds * 1000,
    run: () => sweepExpiredRuns(deps),
    log: deps.log,
  });
  deps.queue.onStop(() => sweeper.stop());
  await sweeper.runNow();
}
