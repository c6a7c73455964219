import fs from 'node:fs/promises';
import os from 'node:os';
import { executeRun, RunError, type Transforms } from '@sluice/engine';
import { z } from 'zod';
import type { Deps } from '../context';
import type { ErrorRecord } from '../db/schema/index';
import { randomSuffix } from '../http/fields';
import {
  type ClaimedWithHints,
  claimRun,
  claimRunsOfJobsSql,
  finishRun,
  type RunOutcome,
  renewLease,
  runEndStatement,
} from '../modules/runs/index';
import { defineJob, type WorkerResources } from './define';
import type { JobHandler } from './queue';
import { knownPlanOrders, PrepareError, prepareRun } from './run-prepare';
import { createRunRecorder } from './run-recorder';
import { makeRunTmpDir, runPipeDir } from './run-tmp';

const payload = z.object({ runId: z.string().uuid() });

declare module './queue' {
  interface JobPayloads {
    'pipelines.run': typeof payload;
  }
}

// The run worker: claim the run under a lease, keep the lease alive with heartbeats (which also
// notice cancel requests), stop at the run time limit, execute the spec through the engine, and
// end the run in one transaction — only while the lease is still ours.

/** This process, as lease owners name it (host and pid help whoever reads pipeline_runs). */
export const workerId = `${os.hostname()}:${process.pid}:${randomSuffix(6)}`;

type StopReason = 'cancel' | 'timeout' | 'lease_lost' | 'shutdown';
type Active = { abort(reason: StopReason): void; done: Promise<void> };

/**
 * Heartbeats come well within the lease, and at least every 2 seconds: they are also how a
 * worker learns that its run was canceled, and a cancel should take effect within seconds.
 */
const heartbeatMs = (leaseSeconds: number) => Math.max(250, Math.min(2000, (leaseSeconds * 1000) / 3));

/** How long a shutting-down worker waits for its runs to hand themselves back. */
const SHUTDOWN_WAIT_MS = 10_000;

const runPipeline = (deps: Deps, { sessions, transforms }: WorkerResources): JobHandler<'pipelines.run'> => {
  const active = new Set<Active>();
  let stopping = false;
  deps.queue.onStop(async () => {
    stopping = true;
    for (const a of active) a.abort('shutdown');
    await Promise.race([
      Promise.allSettled([...active].map((a) => a.done)),
      new Promise((r) => setTimeout(r, SHUTDOWN_WAIT_MS).unref()),
    ]);
  });

  return async ({ runId }, job) => {
    const { leaseSeconds } = deps.config.runs;
    // Claimed by the fetch that took the job (see fetchWith below), else here.
    const claimed =
      job.fetchedWith !== undefined
        ? (job.fetchedWith as ClaimedWithHints | null)
        : stopping
          ? null
          : await claimRun(deps.db, runId, workerId, leaseSeconds);
    if (stopping) {
      // Fetched while shutting down: the run goes back to the queue for another worker.
      if (claimed) await finishRun(deps, claimed.id, workerId, { kind: 'released' }, { jobId: job.id });
      else if (job.fetchedWith === undefined) await deps.queue.enqueue(null, 'pipelines.run', { runId });
      return;
    }
    const run = claimed;
    if (!run) return; // canceled while queued, or another worker has it

    let stopReason: StopReason | null = null;
    const controller = new AbortController();
    let resolveDone!: () => void;
    const entry: Active = {
      abort(reason) {
        if (stopReason) return;
        stopReason = reason;
        controller.abort(new RunError('CANCELED', `run stopped: ${reason}`));
      },
      done: new Promise<void>((r) => {
        resolveDone = r;
      }),
    };
    active.add(entry);

    const heartbeat = setInterval(() => {
      renewLease(deps.db, run.id, workerId, leaseSeconds)
        .then((status) => {
          if (!status) entry.abort('lease_lost');
          else if (status.state === 'canceling') entry.abort('cancel');
        })
        .catch((err) => deps.log.warn({ errCode: err?.code, runId }, 'run heartbeat failed'));
    }, heartbeatMs(leaseSeconds));
    // The environment's run time limit (read with the claim), or the deployment-wide default
    // (docs/runs.md#states).
    const timeoutSeconds = run.runTimeoutSeconds ?? deps.config.runs.timeoutSeconds;
    const timeout = setTimeout(() => entry.abort('timeout'), timeoutSeconds * 1000);
    const recorder = createRunRecorder(deps, run.id, workerId);
    recorder.log('info', null, `attempt ${run.attempt} started`);

    let outcome: RunOutcome;
    // Made while the run is prepared (the file system's thread pool, not the run's path) and
    // removed once the run has ended.
    const tmpDir = makeRunTmpDir();
    tmpDir.catch(() => {}); // the run fails on it in execute
    try {
      // The run's connectors read and write through this worker's pool of data sessions.
      const cursors = await execute(
        { ...deps, sessions },
        run,
        controller.signal,
        recorder,
        tmpDir,
        transforms,
      );
      outcome = { kind: 'succeeded', cursors };
    } catch (err) {
      outcome = failureOutcome(deps, runId, err, stopReason, timeoutSeconds);
    } finally {
      clearInterval(heartbeat);
      clearTimeout(timeout);
    }
    try {
      const progress = await recorder.settle();
      // A no-op when the lease was taken from this worker (presumed dead and recovered).
      await finishRun(deps, run.id, workerId, outcome, { progress, jobId: job.id }).catch((err) => {
        // The lease runs out and the sweep recovers the run; say why it did not end here.
        deps.log.error({ err, runId }, 'run could not be ended');
        throw err;
      });
    } finally {
      active.delete(entry);
      resolveDone();
      await tmpDir.then((dir) => fs.rm(dir, { recursive: true, force: true })).catch(() => {});
    }
  };
};

async function execute(
  deps: Deps,
  run: Awaited<ReturnType<typeof claimRun>> & {},
  signal: AbortSignal,
  recorder: ReturnType<typeof createRunRecorder>,
  tmpDir: Promise<string>,
  transforms: Transforms | undefined,
) {
  const prepared = await prepareRun(deps, run);
  if (run.attempt > 1) {
    // The attempt before died: what its sinks committed stays reported on the run.
    const earlier = await prepared.committedWrites(signal).catch((err) => {
      deps.log.warn({ errCode: (err as { code?: string }).code, runId: run.id }, 'sink ledger lookup failed');
      return {};
    });
    for (const [slug, result] of Object.entries(earlier)) {
      recorder.committed(slug, result);
      recorder.log(
        'info',
        slug,
        `an earlier attempt committed ${result.rows} rows; they are not written again`,
      );
    }
  }
  const result = await executeRun({
    runSlug: run.slug,
    spec: prepared.spec,
    plan: prepared.plan,
    ports: prepared.ports,
    cursors: prepared.cursors,
    scope: prepared.scope,
    secretValues: prepared.secretValues,
    signal,
    observer: recorder.observer,
    log: recorder.log,
    tmpDir: await tmpDir,
    pipeDir: runPipeDir(),
    transforms,
  });
  return result.cursors;
}

function failureOutcome(
  deps: Deps,
  runId: string,
  err: unknown,
  stopReason: StopReason | null,
  timeoutSeconds: number,
): RunOutcome {
  if (stopReason === 'cancel') return { kind: 'canceled' };
  if (stopReason === 'shutdown') return { kind: 'released' };
  if (stopReason === 'timeout') {
    return {
      kind: 'failed',
      error: {
        code: 'RUN_TIMEOUT',
        message: `the run exceeded its time limit of ${timeoutSeconds} seconds`,
      },
    };
  }
  let error: ErrorRecord;
  if (err instanceof RunError) {
    // Its message is made for users and masked; `retryable` comes from the step's connector
    // error, and the run is then tried again as a new attempt (docs/runs.md "Retries").
    return { kind: 'failed', error: { code: err.code, message: err.message }, retryable: err.retryable };
  }
  if (err instanceof PrepareError) {
    // A message made for users: names, never values.
    error = { code: err.code, message: err.message };
  } else {
    deps.log.error({ err, runId }, 'run failed unexpectedly');
    error = { code: 'INTERNAL', message: 'the run failed unexpectedly' };
  }
  return { kind: 'failed', error };
}

export const runPipelineJob = defineJob({
  name: 'pipelines.run',
  payload,
  fetchWith: (deps) => (taken) =>
    claimRunsOfJobsSql(taken, workerId, deps.config.runs.leaseSeconds, knownPlanOrders()),
  statements: (deps) => [runEndStatement(deps)],
  // A lost worker is recovered by the run lease sweep (attempt 2, then WORKER_LOST), and a
  // retryable failure by a new attempt queued as the run ends (run-lifecycle.service.ts), not
  // by a queue retry; the expiry only has to outlast the longest run.
  policy: { retry: { limit: 0, delaySeconds: 0, backoff: false }, expireInSeconds: 6 * 3600 },
  handler: runPipeline,
});
