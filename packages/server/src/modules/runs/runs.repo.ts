import { and, asc, eq, gte, inArray, lt, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import {
  environments,
  pipelineRunInputs,
  pipelineRunLogs,
  pipelineRunSteps,
  pipelineRuns,
  pipelines,
} from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

export type RunRecord = typeof pipelineRuns.$inferSelect;
export type RunRow = RunRecord & { pipelineSlug: string; environmentSlug: string };
export type RunStepRow = typeof pipelineRunSteps.$inferSelect;
export type PipelineRow = typeof pipelines.$inferSelect;

/** Where a run is addressed: `{pe}` of the URL, resolved to ids. */
export type RunPlace = { organizationId: string; projectId: string; environmentId: string };

const columns = { run: pipelineRuns, pipelineSlug: pipelines.slug, environmentSlug: environments.slug };
const flatten = (r: { run: RunRecord; pipelineSlug: string; environmentSlug: string }): RunRow => ({
  ...r.run,
  pipelineSlug: r.pipelineSlug,
  environmentSlug: r.environmentSlug,
});

function selectRuns(db: DbOrTx) {
  return db
    .select(columns)
    .from(pipelineRuns)
    .innerJoin(pipelines, eq(pipelines.id, pipelineRuns.pipelineId))
    .innerJoin(environments, eq(environments.id, pipelineRuns.environmentId));
}

const inPlace = (place: RunPlace) =>
  and(
    eq(pipelineRuns.organizationId, place.organizationId),
    eq(pipelineRuns.environmentId, place.environmentId),
    eq(pipelines.projectId, place.projectId),
  );

export async function findPipeline(db: DbOrTx, projectId: string, slug: string): Promise<PipelineRow | null> {
  const [row] = await db
    .select()
    .from(pipelines)
    .where(and(eq(pipelines.projectId, projectId), eq(pipelines.slug, slug)))
    .limit(1);
  return row ?? null;
}

export async function findRun(db: DbOrTx, place: RunPlace, slug: string): Promise<RunRow | null> {
  const [row] = await selectRuns(db)
    .where(and(inPlace(place), eq(pipelineRuns.slug, slug)))
    .limit(1);
  return row ? flatten(row) : null;
}

/** Any run of the organization with that slug (slugs are unique per organization). */
export async function findRunInOrganization(
  db: DbOrTx,
  organizationId: string,
  slug: string,
): Promise<RunRow | null> {
  const [row] = await selectRuns(db)
    .where(and(eq(pipelineRuns.organizationId, organizationId), eq(pipelineRuns.slug, slug)))
    .limit(1);
  return row ? flatten(row) : null;
}

export async function findRunById(db: DbOrTx, id: string): Promise<RunRow | null> {
  const [row] = await selectRuns(db).where(eq(pipelineRuns.id, id)).limit(1);
  return row ? flatten(row) : null;
}

export async function lockRunById(tx: Tx, id: string): Promise<RunRecord | null> {
  const [row] = await tx.select().from(pipelineRuns).where(eq(pipelineRuns.id, id)).for('update').limit(1);
  return row ?? null;
}

export async function listRuns(
  db: DbOrTx,
  place: RunPlace,
  query: ListQuery & { pipeline_slug?: string; state?: string; trigger?: string; trigger_slug?: string },
) {
  const filters: (SQL | undefined)[] = [inPlace(place)];
  if (query.pipeline_slug) filters.push(eq(pipelines.slug, query.pipeline_slug));
  if (query.state) filters.push(eq(pipelineRuns.state, query.state));
  if (query.trigger) filters.push(eq(pipelineRuns.trigger, query.trigger));
  if (query.trigger_slug) filters.push(eq(pipelineRuns.triggerSlug, query.trigger_slug));
  return paginate({
    query,
    sorts: { run_created_at: { column: pipelineRuns.createdAt, kind: 'timestamp' } },
    tiebreak: pipelineRuns.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select({ ...columns, steps: stepsOfRun })
          .from(pipelineRuns)
          .innerJoin(pipelines, eq(pipelines.id, pipelineRuns.pipelineId))
          .innerJoin(environments, eq(environments.id, pipelineRuns.environmentId))
          .where(and(...filters, where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map((r) => ({ ...flatten(r), steps: r.steps.map(stepFromJson) })),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

/**
 * A listed run's steps, read in the page's own statement (one round trip for the page instead of
 * two; docs/scaling.md), in plan order as stepsOfRuns reads them.
 */
const stepsOfRun = sql<StepJson[]>`(
  select coalesce(json_agg(json_build_object(
           'id', s.id, 'runId', s.run_id, 'stepSlug', s.step_slug, 'state', s.state,
           'rowsIn', s.rows_in, 'rowsOut', s.rows_out, 'bytesIn', s.bytes_in, 'bytesOut', s.bytes_out,
           'error', s.error, 'startedAt', s.started_at, 'finishedAt', s.finished_at) order by s.id), '[]')
    from ${pipelineRunSteps} s where s.run_id = ${pipelineRuns.id})`;

type StepJson = Omit<RunStepRow, 'startedAt' | 'finishedAt'> & {
  startedAt: string | null;
  finishedAt: string | null;
};
const stepFromJson = (s: StepJson): RunStepRow => ({
  ...s,
  startedAt: s.startedAt === null ? null : new Date(s.startedAt),
  finishedAt: s.finishedAt === null ? null : new Date(s.finishedAt),
});

export async function stepsOfRuns(db: DbOrTx, runIds: string[]): Promise<Map<string, RunStepRow[]>> {
  const out = new Map<string, RunStepRow[]>();
  if (runIds.length === 0) return out;
  const rows = await db
    .select()
    .from(pipelineRunSteps)
    .where(inArray(pipelineRunSteps.runId, runIds))
    // Step ids are issued in plan order at the start of an attempt (see run-progress.repo.ts).
    .orderBy(asc(pipelineRunSteps.runId), asc(pipelineRunSteps.id));
  for (const r of rows) {
    const list = out.get(r.runId) ?? [];
    list.push(r);
    out.set(r.runId, list);
  }
  return out;
}

/** Inserts a run unless its slug is taken in the organization (then null: the caller re-reads). */
export async function insertRun(tx: Tx, values: typeof pipelineRuns.$inferInsert): Promise<RunRecord | null> {
  const [row] = await tx
    .insert(pipelineRuns)
    .values(values)
    .onConflictDoNothing({ target: [pipelineRuns.organizationId, pipelineRuns.slug] })
    .returning();
  return row ?? null;
}

export async function insertRunInput(tx: Tx, values: typeof pipelineRunInputs.$inferInsert) {
  await tx.insert(pipelineRunInputs).values(values);
}

export async function findRunInput(db: DbOrTx, runId: string) {
  const [row] = await db.select().from(pipelineRunInputs).where(eq(pipelineRunInputs.runId, runId)).limit(1);
  return row ?? null;
}

export async function deleteRunInput(db: DbOrTx, runId: string) {
  await db.delete(pipelineRunInputs).where(eq(pipelineRunInputs.runId, runId));
}

export type RunPatch = Partial<
  Pick<
    typeof pipelineRuns.$inferInsert,
    | 'state'
    | 'error'
    | 'attempt'
    | 'leaseOwner'
    | 'leaseExpiresAt'
    | 'heartbeatAt'
    | 'cancelRequestedAt'
    | 'finishedAt'
  >
>;

export async function updateRun(db: DbOrTx, id: string, patch: RunPatch) {
  await db
    .update(pipelineRuns)
    .set({ ...patch, updatedAt: new Date() })
    .where(eq(pipelineRuns.id, id));
}

// Log lines are addressed by their number within the run; zero-padded so the text cursor orders
// like the number.
const paddedSeq = sql`lpad(${pipelineRunLogs.seq}::text, 10, '0')`;

/** The cursor of the log line with this number, to read the lines after it (a live tail resumes so). */
export const logCursorAfter = (seq: number) => {
  const padded = String(seq).padStart(10, '0');
  return `${Buffer.from(padded).toString('base64url')}_${padded}`;
};

/**
 * The run's log lines. Lines are partitioned by `at` (docs/operations.md#history-partitions): the
 * bounds from the run's start and, once it has ended, to its end (a day of slack each for worker
 * clocks) leave the other partitions unread, so an old run's log costs what a new one's does.
 * A run executed again has no end until it ends again, so its new lines are never cut off.
 */
export async function listLogs(
  db: DbOrTx,
  run: { id: string; createdAt: Date; finishedAt: Date | null },
  query: ListQuery,
) {
  const since = new Date(run.createdAt.getTime() - 86_400_000);
  const until = run.finishedAt
    ? lt(pipelineRunLogs.at, new Date(run.finishedAt.getTime() + 86_400_000))
    : undefined;
  return paginate({
    query,
    sorts: { log_seq: { column: paddedSeq, kind: 'text' } },
    tiebreak: paddedSeq,
    fetch: ({ where, orderBy, limit }) =>
      db
        .select()
        .from(pipelineRunLogs)
        .where(and(eq(pipelineRunLogs.runId, run.id), gte(pipelineRunLogs.at, since), until, where))
        .orderBy(...orderBy)
        .limit(limit),
    keyOf: (r) => ({ value: String(r.seq).padStart(10, '0'), id: String(r.seq).padStart(10, '0') }),
  });
}
