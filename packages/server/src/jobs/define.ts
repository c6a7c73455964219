import type { SessionPool } from '@sluice/connectors';
import type { Transforms } from '@sluice/engine';
import type { SQL } from 'drizzle-orm';
import type { Deps } from '../context';
import type { FetchWith, JobHandler, JobName, JobPayloads, JobPolicy } from './queue';

/** What a worker process owns besides the deps every process shares. */
export type WorkerResources = {
  /** Data sessions of pipeline runs, kept between runs (connectors' session-pool.ts). */
  sessions: SessionPool;
  /**
   * Where runs' transforms run: unset, in this process's DuckDB; else a transform host's child
   * process (docs/operations.md, "Transforms on the embedded store").
   */
  transforms?: Transforms;
};

/**
 * One kind of background work, in one file (docs/architecture.md#background-work): its name,
 * payload schema (ids and slugs only, never secrets), how the queue retries and expires it, and
 * its handler.
 */
export type JobDefinition<N extends JobName> = {
  name: N;
  payload: JobPayloads[N];
  policy: JobPolicy;
  /** A cron expression: pg-boss enqueues one job per match for the whole deployment. */
  schedule?: string;
  /**
   * Called once per worker process with what it runs on; returns the function that runs each
   * job (payload already parsed). State kept between jobs lives in that closure.
   */
  handler(deps: Deps, worker: WorkerResources): JobHandler<N>;
  /** What the fetch that takes a job also does, in its statement (queue.ts FetchWith). */
  fetchWith?(deps: Deps): FetchWith;
  /**
   * The statements its handler sends under a name (db/named.ts) on every job, as any job sends
   * them: each worker warms its pooled connections with them and with its queue's fetch when it
   * starts (db/warm.ts), so its first jobs do not fill each new backend's caches. For the hot
   * queues only (the runs): each statement warmed costs every connection of every worker.
   */
  statements?(deps: Deps): SQL[];
};

export type AnyJobDefinition = { [N in JobName]: JobDefinition<N> }[JobName];

/** Types a definition by its name: the payload must be the schema the job file declared. */
export function defineJob<N extends JobName>(definition: JobDefinition<N>): JobDefinition<N> {
  return definition;
}
