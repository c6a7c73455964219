import { type SQL, sql } from 'drizzle-orm';
import { type Deps, systemActor } from '../../context';
import type { Tx } from '../../db/client';
import type { ErrorRecord } from '../../db/schema/index';
import { eventFromRowSql, recordEvent } from '../events/index';
import { alertRunEnded, runAlertOpenSql } from '../notifications/index';
import { type EndAtOnce, endRunAtOnce, endRunSql } from './run-end.repo';
import { type ClaimedRun, lockExpiredRuns, lockOwnedRun, type OwnedRun } from './run-lease.repo';
import {
  endRunRows,
  insertLogs,
  type LogLine,
  type StepUpdate,
  updateSteps,
  upsertCheckpoints,
} from './run-progress.repo';
import { updateRun } from './runs.repo';

// Worker-side transitions of a run. Each one follows the same path: lock the run (only while the
// lease is still ours) → check its state → write the new state → record the event, in one
// transaction.

export type RunOutcome =
  | { kind: 'succeeded'; cursors: Record<string, string | null> }
  /** `retryable`: the step's connector error says another attempt can help (docs/runs.md "Retries"). */
  | { kind: 'failed'; error: ErrorRecord; retryable?: boolean }
  | { kind: 'canceled' }
  /** This worker is shutting down: the run goes back to the queue, same attempt. */
  | { kind: 'released' };

const systemSource = (organizationId: string) => ({ organizationId, actor: systemActor, requestId: null });

async function recordRunEvent(tx: Tx, run: ClaimedRun, metadata: Record<string, unknown>) {
  await recordEvent(tx, systemSource(run.organizationId), {
    entityType: 'pipeline_run',
    entitySlug: run.slug,
    action: 'update',
    metadata: { attempt: run.attempt, ...metadata },
  });
}

/**
 * Puts a run back in the queue, unowned, as `attempt` (the same or the next), with a log line and
 * an event saying why: a worker shutting down, a lost worker, a retryable failure. The next claim
 * starts the attempt over from the last committed checkpoints (cursors only advance on success).
 */
async function requeue(
  deps: Deps,
  tx: Tx,
  run: ClaimedRun,
  o: {
    attempt: number;
    log: Omit<LogLine, 'stepSlug' | 'at'>;
    action: 'update' | 'reconcile';
    metadata: Record<string, unknown>;
    startAfterSeconds?: number;
  },
) {
  await updateRun(tx, run.id, {
    state: 'queued',
    attempt: o.attempt,
    leaseOwner: null,
    leaseExpiresAt: null,
  });
  await insertLogs(tx, run.id, [{ stepSlug: null, ...o.log, at: new Date() }]);
  await deps.queue.enqueue(tx, 'pipelines.run', { runId: run.id }, { startAfter: o.startAfterSeconds });
  await recordEvent(tx, systemSource(run.organizationId), {
    entityType: 'pipeline_run',
    entitySlug: run.slug,
    action: o.action,
    metadata: { state: 'queued', attempt: o.attempt, ...o.metadata },
  });
}

/** Whether a run failed by a retryable error gets another attempt (SLUICE_RUN_RETRY_ATTEMPTS). */
const attemptsLeft = (deps: Deps, run: ClaimedRun) => run.attempt < 1 + deps.config.runs.retry.attempts;

/**
 * A retryable failure with attempts left: the run is queued again as the next attempt after the
 * configured wait, and no alert is raised (docs/runs.md "Retries").
 */
async function retryLater(deps: Deps, tx: Tx, run: ClaimedRun, error: ErrorRecord) {
  const { attempts, delaysSeconds } = deps.config.runs.retry;
  const wait = delaysSeconds[Math.min(run.attempt - 1, delaysSeconds.length - 1)];
  const next = run.attempt + 1;
  await requeue(deps, tx, run, {
    attempt: next,
    log: {
      level: 'warn',
      message: `attempt ${run.attempt} failed (${error.code}: ${error.message}); attempt ${next} of ${1 + attempts} starts in ${wait} s from the last committed checkpoints`,
    },
    action: 'update',
    metadata: {
      reason: 'retryable_failure',
      error_code: error.code,
      retry_at: new Date(Date.now() + wait * 1000).toISOString(),
    },
    startAfterSeconds: wait,
  });
}

/** A run's last transition: terminal state, sealed input gone, event. */
async function endRun(
  deps: Deps,
  tx: Tx,
  run: ClaimedRun & { place?: OwnedRun['place'] },
  state: 'succeeded' | 'failed' | 'canceled',
  error: ErrorRecord | null,
  progress?: FinishExtras['progress'],
) {
  // Terminal state, the attempt's last progress, steps still open closed, and the sealed input
  // deleted (docs/runs.md#executing: input values are not kept; they lived sealed only while the
  // run could still use them): one statement.
  await endRunRows(tx, run.id, state, error, progress);
  await recordRunEvent(tx, run, { state, error_code: error?.code ?? null });
  // Failed after its retries -> pipeline_run_failed; the next success resolves it (+ recovered).
  await alertRunEnded(tx, deps, run, state, error, run.place);
}

/** An attempt's last step values and log lines, when the run is not ending. */
async function writeProgress(
  tx: Tx,
  runId: string,
  owner: string,
  progress: NonNullable<FinishExtras['progress']>,
) {
  await updateSteps(tx, runId, owner, progress.steps);
  await insertLogs(tx, runId, progress.logs);
}

/** What the attempt had not written yet, and the queue job it came with. */
export type FinishExtras = {
  progress?: { steps: (StepUpdate & { stepSlug: string })[]; logs: LogLine[] };
  /** Completed in the same transaction: no separate commit to wait for after the run ended. */
  jobId?: string;
};

/**
 * A success or cancel with nothing else to decide (no notification to resolve), in one
 * statement: see run-end.repo.ts. The transaction below does the rest.
 */
async function endAtOnce(
  deps: Deps,
  runId: string,
  owner: string,
  outcome: Extract<RunOutcome, { kind: 'succeeded' | 'canceled' }>,
  extras: FinishExtras,
) {
  const completion = extras.jobId ? deps.queue.completion('pipelines.run', extras.jobId) : null;
  const cursors =
    outcome.kind === 'succeeded'
      ? (Object.fromEntries(Object.entries(outcome.cursors).filter(([, c]) => c !== null)) as Record<
          string,
          string
        >)
      : {};
  // In a transaction of its own, though one statement: a worker that dies while the statement
  // waits (for the run's row lock) never sends the commit, so its end does not land after it.
  const ended = await deps.db.transaction((tx) =>
    endRunAtOnce(
      tx,
      endAtOnceOf(
        runId,
        owner,
        outcome.kind,
        extras.progress ?? { steps: [], logs: [] },
        cursors,
        completion,
      ),
    ),
  );
  if (ended === 'ended') completion?.done();
  return ended;
}

function endAtOnceOf(
  runId: string,
  owner: string,
  state: 'succeeded' | 'canceled',
  progress: EndAtOnce['progress'],
  cursors: Record<string, string>,
  completion: { sql(guard: SQL): SQL } | null,
): EndAtOnce {
  return {
    runId,
    owner,
    state,
    progress,
    cursors,
    blockedBy: runAlertOpenSql,
    job: completion?.sql ?? null,
    event: (row) =>
      eventFromRowSql(
        { organizationId: sql`${row}.organization_id`, actor: systemActor, requestId: null },
        {
          entityType: 'pipeline_run',
          action: 'update',
          entitySlug: sql`${row}.slug`,
          metadata: sql`jsonb_build_object('attempt', ${row}.attempt, 'state', ${row}.state, 'error_code', null)`,
        },
        row,
      ),
  };
}

/**
 * The statement a run that succeeds ends with, as endAtOnce sends it (the values are parameters,
 * so any run's end has this text): a worker warms its connections with it at start
 * (jobs/define.ts `statements`), before its first run ends on cold caches.
 */
export function runEndStatement(deps: Deps): SQL {
  const none = '00000000-0000-0000-0000-000000000000';
  const completion = deps.queue.completion('pipelines.run', none);
  return endRunSql(endAtOnceOf(none, '', 'succeeded', { steps: [], logs: [] }, {}, completion));
}

/** Applies the outcome if `owner` still holds the run; false when the lease was lost meanwhile. */
export async function finishRun(
  deps: Deps,
  runId: string,
  owner: string,
  outcome: RunOutcome,
  extras: FinishExtras = {},
) {
  if (outcome.kind === 'succeeded' || outcome.kind === 'canceled') {
    const ended = await endAtOnce(deps, runId, owner, outcome, extras);
    if (ended !== 'blocked') return ended === 'ended';
  }
  return deps.db.transaction(async (tx) => {
    const run = await lockOwnedRun(tx, runId, owner);
    if (!run) return false;
    const { progress } = extras;
    if (extras.jobId) await deps.queue.complete(tx, 'pipelines.run', extras.jobId);
    // A cancel that arrived while the run was ending still wins over success (the states only
    // lead from canceling to canceled); sinks did commit, so their cursors are kept below.
    const canceling = run.state === 'canceling';
    if (outcome.kind === 'succeeded') {
      // Only now: a cursor advances after every sink of the run has committed.
      const committed = Object.fromEntries(Object.entries(outcome.cursors).filter(([, c]) => c !== null));
      await upsertCheckpoints(tx, run, committed);
      await endRun(deps, tx, run, canceling ? 'canceled' : 'succeeded', null, progress);
    } else if (outcome.kind === 'failed') {
      const error = canceling ? null : outcome.error;
      if (error && outcome.retryable && attemptsLeft(deps, run)) {
        if (progress) await writeProgress(tx, run.id, owner, progress);
        await retryLater(deps, tx, run, error);
        return true;
      }
      const last =
        error && outcome.retryable
          ? {
              stepSlug: null,
              level: 'error',
              message: `attempt ${run.attempt} failed (${error.code}); it was the last attempt`,
              at: new Date(),
            }
          : null;
      const ended = last
        ? { steps: progress?.steps ?? [], logs: [...(progress?.logs ?? []), last] }
        : progress;
      await endRun(deps, tx, run, canceling ? 'canceled' : 'failed', error, ended);
    } else if (outcome.kind === 'canceled' || canceling) {
      await endRun(deps, tx, run, 'canceled', null, progress);
    } else {
      if (progress) await writeProgress(tx, run.id, owner, progress);
      await requeue(deps, tx, run, {
        attempt: run.attempt,
        log: { level: 'warn', message: 'worker shut down; the run was queued again' },
        action: 'update',
        metadata: { reason: 'worker_shutdown' },
      });
    }
    return true;
  });
}

export const WORKER_LOST_MESSAGE = 'the worker running this run stopped responding, and so did the retry';

/**
 * Recovers runs whose lease expired: a worker died (or stalled) holding them. First time, the run
 * is queued again as attempt 2 and resumes from the last committed checkpoint (cursors only ever
 * advance on success); second time it fails with WORKER_LOST. A canceling run just ends canceled.
 * Returns how many runs were handled.
 */
export async function recoverExpiredRuns(deps: Deps, limit = 50): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const runs = await lockExpiredRuns(tx, limit);
    for (const run of runs) {
      const now = new Date();
      if (run.state === 'canceling') {
        await endRun(deps, tx, run, 'canceled', null);
      } else if (run.attempt < 2) {
        await requeue(deps, tx, run, {
          attempt: run.attempt + 1,
          log: {
            level: 'warn',
            message: `worker lost; retrying (attempt ${run.attempt + 1}) from the last committed checkpoint`,
          },
          action: 'reconcile',
          metadata: { reason: 'worker_lost' },
        });
      } else {
        await insertLogs(tx, run.id, [
          { stepSlug: null, level: 'error', message: 'worker lost again; the run failed', at: now },
        ]);
        await endRun(deps, tx, run, 'failed', { code: 'WORKER_LOST', message: WORKER_LOST_MESSAGE });
      }
    }
    return runs.length;
  });
}
