import { and, asc, eq, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { planOrderedId, planOrderedIdSql } from '../../db/ids';
import {
  type ErrorRecord,
  LOG_BATCH_LINES,
  pipelineCheckpoints,
  pipelineRunSteps,
  pipelineRuns,
  type StoredLogLine,
} from '../../db/schema/index';

// What a run leaves behind while it works: per-step progress, log lines, and (on success only)
// the checkpoint cursors.

/**
 * Every step of the plan as `pending`: the start of an attempt (a recovered or handed-back run
 * starts over). Two CTE bodies for the statement that reads what the attempt needs
 * (run-sources.repo.ts): an upsert (a first attempt has no rows yet), and a delete of steps
 * outside the plan, which only ever finds rows of another plan.
 */
export function resetStepsSql(runId: string, order: string[]): { gone: SQL; reset: SQL } {
  const now = Date.now();
  const ids = order.map((_, i) => planOrderedId(i, now));
  return {
    gone: sql`
      delete from pipeline_run_steps
       where run_id = ${runId}::uuid and step_slug <> all(${sql.param(order)}::text[])`,
    reset: sql`
      insert into pipeline_run_steps (id, run_id, step_slug, state)
      select s.id::uuid, ${runId}::uuid, s.slug, 'pending'
        from unnest(${sql.param(ids)}::text[], ${sql.param(order)}::text[]) as s(id, slug)
      on conflict (run_id, step_slug) do update
         set state = 'pending', rows_in = 0, rows_out = 0, bytes_in = 0, bytes_out = 0, error = null,
             started_at = null, finished_at = null`,
  };
}

/**
 * resetStepsSql for the runs of `claimed` (CTE rows with id, "pipelineId", "specHash") whose plan
 * order `plans` holds by `pipelineId:specHash`: two CTEs for the statement that claims them.
 * Step ids are plan-ordered as planOrderedId makes them: the position, the statement's time in
 * milliseconds, 48 random bits.
 */
export function resetClaimedStepsSql(claimed: SQL, plans: Record<string, string[]>): SQL {
  const order = sql`jsonb_array_elements_text(${JSON.stringify(plans)}::jsonb -> (w."pipelineId"::text || ':' || w."specHash"))
                      with ordinality as o(slug, n)`;
  return sql`
    gone as (
      delete from pipeline_run_steps s using ${claimed} w
       where s.run_id = w.id and w."stepsReset"
         and s.step_slug not in (select o.slug from ${order})
    ),
    reset as (
      insert into pipeline_run_steps (id, run_id, step_slug, state)
      select ${sql.raw(planOrderedIdSql('o.n - 1'))}, w.id, o.slug, 'pending'
        from ${claimed} w, ${order}
       where w."stepsReset"
      on conflict (run_id, step_slug) do update
         set state = 'pending', rows_in = 0, rows_out = 0, bytes_in = 0, bytes_out = 0, error = null,
             started_at = null, finished_at = null
    )`;
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
  const rows = stepRows(updates);
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

export type Progress = { steps: (StepUpdate & { stepSlug: string })[]; logs: LogLine[] };

/**
 * A run's terminal rows in one statement: the run's state (lease released), the attempt's last
 * step values and log lines not written yet (`progress`), its steps still pending (skipped) or
 * running (canceled) after those, and its sealed input deleted.
 */
export async function endRunRows(
  tx: DbOrTx,
  runId: string,
  state: 'succeeded' | 'failed' | 'canceled',
  error: ErrorRecord | null,
  progress: Progress = { steps: [], logs: [] },
) {
  const now = new Date().toISOString();
  await tx.execute(sql`
    with ended as (
      update pipeline_runs
         set state = ${state}, error = ${error === null ? null : JSON.stringify(error)}::jsonb,
             finished_at = ${now}::timestamptz, lease_owner = null, lease_expires_at = null,
             updated_at = ${now}::timestamptz
       where id = ${runId}::uuid
    ),
    ${closingRows(runId, now, progress, sql.raw('true'))}
    select 1`);
}

/**
 * The CTEs (after a first one) that close a run's other rows as it ends: the attempt's last step
 * values, steps still open, unwritten log lines and the sealed input, each only where `guard`
 * holds (a condition on the run's own update, when that one may match nothing).
 */
export function closingRows(runId: string, now: string, progress: Progress, guard: SQL) {
  // A step's state after the attempt's last values, before it is closed.
  const last = sql.raw('coalesce(u.state, s.state)');
  return sql`
    u as (
      select * from jsonb_to_recordset(${stepRows(progress.steps)}::jsonb) as u(step_slug text,
        state text, rows_in bigint, rows_out bigint, bytes_in bigint, bytes_out bigint, error jsonb,
        started_at timestamptz, finished_at timestamptz)
    ),
    closed as (
      -- s.run_id too: matched by s.id alone, a plan for a table without statistics hashed every
      -- step of every run.
      update pipeline_run_steps s
         set state = case ${last} when 'pending' then 'skipped' when 'running' then 'canceled' else ${last} end,
             rows_in = coalesce(u.rows_in, s.rows_in), rows_out = coalesce(u.rows_out, s.rows_out),
             bytes_in = coalesce(u.bytes_in, s.bytes_in), bytes_out = coalesce(u.bytes_out, s.bytes_out),
             error = case when u.step_slug is null then s.error else u.error end,
             started_at = coalesce(s.started_at, u.started_at),
             finished_at = case ${last} when 'pending' then null when 'running' then ${now}::timestamptz
                                else coalesce(s.finished_at, u.finished_at) end
        from pipeline_run_steps s0 left join u on u.step_slug = s0.step_slug
       where s.id = s0.id and s0.run_id = ${runId}::uuid and s.run_id = ${runId}::uuid
         and (u.step_slug is not null or s0.state in ('pending', 'running')) and ${guard}
    ),
    logged as (${logInsert(runId, progress.logs, guard)}),
    sealed as (delete from pipeline_run_inputs where run_id = ${runId}::uuid and ${guard})`;
}

/** Step updates as the jsonb rows the statements above read. */
function stepRows(updates: (StepUpdate & { stepSlug: string })[]) {
  return JSON.stringify(
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
}

/**
 * The earliest time a line of the run can carry: lines are partitioned by `at`
 * (docs/operations.md#history-partitions), and bounding it by the run's start leaves out the
 * partitions from before the run. A day of slack for a worker clock behind the store's.
 */
const sinceRunStart = (runId: string) =>
  sql`(select created_at - interval '1 day' from pipeline_runs where id = ${runId}::uuid)`;

/**
 * Lines as the rows that store them: batches of up to LOG_BATCH_LINES consecutive lines, numbered
 * from 1 within this write, each line's time in milliseconds after its batch's first line
 * (docs/operations.md#run-logs).
 */
function logBatches(lines: LogLine[]) {
  const batches: { first: number; last: number; at: string; lines: StoredLogLine[] }[] = [];
  for (let i = 0; i < lines.length; i += LOG_BATCH_LINES) {
    const part = lines.slice(i, i + LOG_BATCH_LINES);
    const t0 = part[0].at.getTime();
    batches.push({
      first: i + 1,
      last: i + part.length,
      at: part[0].at.toISOString(),
      lines: part.map((l) => [l.stepSlug, l.level, l.message, l.at.getTime() - t0]),
    });
  }
  return batches;
}

/**
 * Appending log lines, numbered on from the run's last one: the numbering reads the run's last
 * batch in the same statement. One row a batch, so a write of a few lines is one row and one
 * index entry.
 */
function logInsert(runId: string, lines: LogLine[], guard: SQL = sql.raw('true')) {
  return sql`
    insert into pipeline_run_logs (run_id, seq, last_seq, at, lines)
    select ${runId}::uuid, last.seq + b.first, last.seq + b.last, b.at, b.lines
      from jsonb_to_recordset(${JSON.stringify(logBatches(lines))}::jsonb)
             as b(first int, last int, at timestamptz, lines jsonb),
           (select coalesce((select last_seq from pipeline_run_logs
                              where run_id = ${runId}::uuid and at >= ${sinceRunStart(runId)}
                              order by seq desc limit 1), 0) as seq) as last
     where ${guard}`;
}

export type LogLine = { stepSlug: string | null; level: string; message: string; at: Date };

/**
 * Appends lines numbered on from the run's last one. One writer at a time holds a run (its
 * worker, or the sweep once the lease expired), so numbers never collide in practice; the unique
 * index refuses the batch if they ever did.
 */
export async function insertLogs(db: DbOrTx, runId: string, lines: LogLine[]) {
  if (lines.length === 0) return;
  await db.execute(logInsert(runId, lines));
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
