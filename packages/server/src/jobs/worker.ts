import { createSessionPool } from '@sluice/connectors';
import { type StartHost, transformHost } from '@sluice/engine';
import type { Deps } from '../context';
import { namedText } from '../db/named';
import { jobDefinitions } from './catalog';
import type { AnyJobDefinition, JobDefinition, WorkerResources } from './define';
import type { JobName } from './queue';
import { startRunSweeper } from './run-sweep';
import { startTriggerTicker } from './trigger-ticker';
import { type WarmStart, warmStart } from './warm-start';

/**
 * Starts consuming every queue of the catalog in this process. `warmStart`: first load the
 * deployed pipelines' code (warm-start.ts; what was loaded is returned); off for the embedded
 * store, whose `serve` keeps its memory bound (docs/operations.md#a-workers-warm-start).
 */
export async function startWorker(
  deps: Deps,
  opts: { concurrency?: number; warmStart?: boolean; transformHost?: StartHost } = {},
): Promise<{ warmStart: WarmStart | null }> {
  const concurrency = opts.concurrency ?? 1;
  // Transforms in a child process of their own (docs/operations.md, "Transforms on the embedded
  // store"), stopped with the queue.
  const host = opts.transformHost ? transformHost(opts.transformHost) : null;
  // Data sessions of pipeline runs outlive a run (session-pool.ts); enough idle ones for every
  // run slot's source and sink, closed when the queue stops (those still in use as they return).
  const worker: WorkerResources = {
    sessions: createSessionPool({ maxIdle: 2 * concurrency + 2 }),
    ...(host ? { transforms: host } : {}),
  };
  deps.queue.onStop(() => {
    host?.stop();
    return worker.sessions.close();
  });
  // Every pooled connection learns the jobs' hot statements before the first job (and the fetch
  // of their queues as each starts consuming, queue.ts `work`).
  await deps.store.warmUp(
    (jobDefinitions as readonly AnyJobDefinition[])
      .flatMap((job) => job.statements?.(deps) ?? [])
      .map(namedText),
  );
  const warm = opts.warmStart ? await warmStart(deps) : null;
  for (const job of jobDefinitions as readonly AnyJobDefinition[]) {
    await work(deps, worker, job, concurrency);
    // pg-boss keeps one schedule per name across all workers.
    if (job.schedule) await deps.queue.boss.schedule(job.name, job.schedule, {});
  }
  // Runs whose worker died: by the cron of pipelines.sweep, and by each worker on its own.
  await startRunSweeper(deps);
  startTriggerTicker(deps);
  return { warmStart: warm };
}

function work<N extends JobName>(
  deps: Deps,
  worker: WorkerResources,
  job: JobDefinition<N>,
  concurrency: number,
) {
  return deps.queue.work(job.name, job.handler(deps, worker), {
    concurrency,
    fetchWith: job.fetchWith?.(deps),
    warm: job.statements !== undefined,
  });
}
