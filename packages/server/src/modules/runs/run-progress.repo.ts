import { randomUUID } from 'node:crypto';
import { and, asc, eq, notInArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import {
  type ErrorRecord,
  pipelineCheckpoints,
  pipelineRunLogs,
  pipelineRunSteps,
  pipelineRuns,
} from '../../db/schema/index';

// What a run leaves behind while it works: per-step progress, log lines, and (on success only)
// the checkpoint cursors.

/**
 * A fresh id whose first 32 bits are the step's position in the plan, so ordering step rows by
 * id lists them in plan order; the remaining 96 random bits keep it unique.
 */
function planOrderedId(index: number): string {
  return `${index.toString(16).padStart(8, '0')}${randomUUID().slice(8)}`;
}

/**
 * Every step of the plan as `pending`: the start of an attempt (a recovered or handed-back run
 * starts over). One upsert (a first attempt has no rows yet) plus a delete of steps outside the
 * plan, which only ever finds rows of another plan: one commit to wait for instead of two.
 */
export async function resetSteps(db: DbOrTx, runId: string, order: string[]) {
  if (order.length > 0) {
    await db
      .insert(pipelineRunSteps)
      .values(order.map((stepSlug, i) => ({ id: planOrderedId(i), runId, stepSlug, state: 'pending' })))
      .onConflictDoUpdate({
        target: [pipelineRunSteps.runId, pipelineRunSteps.stepSlug],
        set: {
          state: 'pending',
          rowsIn: 0,
          rowsOut: 0,
          bytesIn: 0,
          bytesOut: 0,
          error: null,
          startedAt: null,
          finishedAt: null,
        },
      });
  }
  await db
    .delete(pipelineRunSteps)
    .where(
      and(
        eq(pipelineRunSteps.runId, runId),
        order.length > 0 ? notInArray(pipelineRunSteps.stepSlug, order) : undefined,
      ),
    );
}

export type StepUpdate = {
  state: string;
  rowsIn: number;
  rowsOut: number;
  bytesIn: number;
  bytesOut: number;
  error: ErrorRecord | null;
  startedAt?: Date;
  finishedAt?: Date;
};

/**
 * Updates steps (one statement for all of them) while `owner` holds the run: a worker that lost
 * it cannot touch the next attempt.
 */
export async function updateSteps(
  db: DbOrTx,
  runId: string,
  owner: string,
  updates: (StepUpdate & { stepSlug: string })[],
) {
  if (updates.length === 0) return;
  const rows = JSON.stringify(
    updates.map((u) => ({
      step_slug: u.stepSlug,
      state: u.state,
      rows_in: u.rowsIn,
      rows_out: u.rowsOut,
      bytes_in: u.bytesIn,
      bytes_out: u.bytesOut,
      error: u.error,
      started_at: u.startedAt?.toISOString() ?? null,
      finished_at: u.finishedAt?.toISOString() ?? null,
    })),
  );
  // The first report of a step starts it; keep the earliest start and the first finish.
  await db.execute(sql`
    update pipeline_run_steps s
       set state = u.state, rows_in = u.rows_in, rows_out = u.rows_out, bytes_in = u.bytes_in,
           bytes_out = u.bytes_out, error = u.error,
           started_at = coalesce(s.started_at, u.started_at),
           finished_at = coalesce(s.finished_at, u.finished_at)
      from jsonb_to_recordset(${rows}::jsonb) as u(step_slug text, state text, rows_in bigint,
           rows_out bigint, bytes_in bigint, bytes_out bigint, error jsonb, started_at timestamptz,
           finished_at timestamptz)
     where s.run_id = ${runId} and s.step_slug = u.step_slug
       and exists (select 1 from pipeline_runs r where r.id = ${runId} and r.lease_owner = ${owner})`);
}

/** Steps an attempt left unfinished end with the run: never started → skipped, started → canceled. */
export async function closeOpenSteps(db: DbOrTx, runId: string) {
  await db
    .update(pipelineRunSteps)
    .set({
      state: sql`case when ${pipelineRunSteps.state} = 'pending' then 'skipped' else 'canceled' end`,
      finishedAt: sql`case when ${pipelineRunSteps.state} = 'pending' then null else now() end`,
    })
    .where(and(eq(pipelineRunSteps.runId, runId), sql`${pipelineRunSteps.state} in ('pending', 'running')`));
}

export type LogLine = { stepSlug: string | null; level: string; message: string; at: Date };

/**
 * Appends lines numbered on from the run's last one. One writer at a time holds a run (its
 * worker, or the sweep once the lease expired), so numbers never collide in practice; the unique
 * index refuses the batch if they ever did.
 */
export async function insertLogs(db: DbOrTx, runId: string, lines: LogLine[]) {
  if (lines.length === 0) return;
  const [{ last }] = await db
    .select({ last: sql<number>`coalesce(max(${pipelineRunLogs.seq}), 0)::int` })
    .from(pipelineRunLogs)
    .where(eq(pipelineRunLogs.runId, runId));
  await db.insert(pipelineRunLogs).values(lines.map((l, i) => ({ runId, seq: Number(last) + i + 1, ...l })));
}

export type CheckpointRow = {
  stepSlug: string;
  cursor: string | null;
  runSlug: string | null;
  updatedAt: Date;
};

export async function listCheckpoints(
  db: DbOrTx,
  pipelineId: string,
  environmentId: string,
): Promise<CheckpointRow[]> {
  return db
    .select({
      stepSlug: pipelineCheckpoints.stepSlug,
      cursor: pipelineCheckpoints.cursor,
      runSlug: pipelineRuns.slug,
      updatedAt: pipelineCheckpoints.updatedAt,
    })
    .from(pipelineCheckpoints)
    .leftJoin(pipelineRuns, eq(pipelineRuns.id, pipelineCheckpoints.runId))
    .where(
      and(
        eq(pipelineCheckpoints.pipelineId, pipelineId),
        eq(pipelineCheckpoints.environmentId, environmentId),
      ),
    )
    .orderBy(asc(pipelineCheckpoints.stepSlug));
}

/** `{step slug: cursor}` of a pipeline in an environment: the lower bounds of the next run. */
export async function checkpointCursors(
  db: DbOrTx,
  pipelineId: string,
  environmentId: string,
): Promise<Record<string, string | null>> {
  const rows = await listCheckpoints(db, pipelineId, environmentId);
  return Object.fromEntries(rows.map((r) => [r.stepSlug, r.cursor]));
}

export async function upsertCheckpoints(
  db: DbOrTx,
  run: { id: string; organizationId: string; pipelineId: string; environmentId: string },
  cursors: Record<string, string | null>,
) {
  const entries = Object.entries(cursors);
  if (entries.length === 0) return;
  await db
    .insert(pipelineCheckpoints)
    .values(
      entries.map(([stepSlug, cursor]) => ({
        organizationId: run.organizationId,
        pipelineId: run.pipelineId,
        environmentId: run.environmentId,
        stepSlug,
        cursor,
        runId: run.id,
      })),
    )
    .onConflictDoUpdate({
      target: [
        pipelineCheckpoints.pipelineId,
        pipelineCheckpoints.environmentId,
        pipelineCheckpoints.stepSlug,
      ],
      set: { cursor: sql`excluded.cursor`, runId: sql`excluded.run_id`, updatedAt: sql`now()` },
    });
}

export async function deleteCheckpoints(db: DbOrTx, pipelineId: string, environmentId: string) {
  const rows = await db
    .delete(pipelineCheckpoints)
    .where(
      and(
        eq(pipelineCheckpoints.pipelineId, pipelineId),
        eq(pipelineCheckpoints.environmentId, environmentId),
      ),
    )
    .returning({ stepSlug: pipelineCheckpoints.stepSlug });
  return rows.length;
}
