import { and, asc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import {
  environments,
  pipelineRunInputs,
  pipelineRunSteps,
  pipelineRuns,
  pipelines,
} from '../../db/schema/index';
import { isoOfTimestamptz } from '../../db/timestamptz';
import { type ListQuery, paginate } from '../../http/pagination';

export type RunRecord = typeof pipelineRuns.$inferSelect;
export type RunRow = RunRecord & { pipelineSlug: string; environmentSlug: string };
export type RunStepRow = typeof pipelineRunSteps.$inferSelect;
export type PipelineRow = typeof pipelines.$inferSelect;

/** Where a run is addressed: `{pe}` of the URL, resolved to ids. */
export type RunPlace = { organizationId: string; projectId: string; environmentId: string };
/** A runs list's place: with `pipelineIds`, the project's pipelines are not read again. */
export type PlaceOfRuns = RunPlace & { pipelineIds?: string[] };

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

/**
 * A listed run's steps, read in the page's own statement (one round trip for the page instead of
 * two; docs/scaling.md), in plan order as stepsOfRuns reads them. Raw text on "pipeline_runs":
 * the ORM's page and firstPageSql share it. Only what a step resource shows (toStep): the two
 * ids were a third of the JSON every page request parses.
 */
export const STEPS_OF_RUN_SQL = `(
  select coalesce(json_agg(json_build_object(
           'stepSlug', s.step_slug, 'state', s.state,
           'rowsIn', s.rows_in, 'rowsOut', s.rows_out, 'bytesIn', s.bytes_in, 'bytesOut', s.bytes_out,
           'error', s.error, 'startedAt', s.started_at, 'finishedAt', s.finished_at) order by s.id), '[]')
    from pipeline_run_steps s where s.run_id = "pipeline_runs"."id")`;
const stepsOfRun = sql<StepJson[]>`${sql.raw(STEPS_OF_RUN_SQL)}`;

/** A listed run's step: its times as the API writes them (ISO, db/timestamptz.ts), not Dates. */
export type ListedStep = Omit<RunStepRow, 'id' | 'runId' | 'startedAt' | 'finishedAt'> & {
  startedAt: string | null;
  finishedAt: string | null;
};
export type StepJson = ListedStep;
/** The JSON's times (json_build_object's text) in place, in ISO: a list page makes no Date. */
export const stepFromJson = (s: StepJson): ListedStep => {
  if (s.startedAt !== null) s.startedAt = isoOfTimestamptz(s.startedAt);
  if (s.finishedAt !== null) s.finishedAt = isoOfTimestamptz(s.finishedAt);
  return s;
};

export const runSorts = { run_created_at: { column: pipelineRuns.createdAt, kind: 'timestamp' } } as const;

/**
 * What a runs list reads of a run: the fields of a run resource (toRun). Its times are Dates as
 * the ORM reads them, or already ISO text where the first page's statement reads them so.
 */
export type RunListRow = Pick<
  RunRow,
  | 'slug'
  | 'pipelineSlug'
  | 'environmentSlug'
  | 'specHash'
  | 'state'
  | 'trigger'
  | 'triggerSlug'
  | 'inputKeys'
  | 'attempt'
  | 'error'
  | 'contractChecks'
> & {
  createdAt: Date | string;
  startedAt: Date | string | null;
  finishedAt: Date | string | null;
  steps: ListedStep[];
};

export type RunsListQuery = ListQuery & {
  pipeline_slug?: string;
  state?: string;
  trigger?: string;
  trigger_slug?: string;
};

/** Whether a runs list asks for the first page, newest first, unfiltered: firstPageSql's. */
export const isPlainFirstPage = (q: RunsListQuery) =>
  !q.cursor &&
  q.order === 'desc' &&
  q.direction === 'next' &&
  q.sort_by === 'run_created_at' &&
  !q.pipeline_slug &&
  !q.state &&
  !q.trigger &&
  !q.trigger_slug;

/** What a listed run shows (RunListRow), not every column of the run: less for the ORM to build and map. */
const listedColumns = {
  slug: pipelineRuns.slug,
  pipelineSlug: pipelines.slug,
  environmentSlug: environments.slug,
  specHash: pipelineRuns.specHash,
  state: pipelineRuns.state,
  trigger: pipelineRuns.trigger,
  triggerSlug: pipelineRuns.triggerSlug,
  inputKeys: pipelineRuns.inputKeys,
  attempt: pipelineRuns.attempt,
  createdAt: pipelineRuns.createdAt,
  startedAt: pipelineRuns.startedAt,
  finishedAt: pipelineRuns.finishedAt,
  error: pipelineRuns.error,
  contractChecks: pipelineRuns.contractChecks,
  steps: stepsOfRun,
};

/**
 * The other pages and the filtered lists. Without a pipeline filter, the project's pipelines are
 * read first and the runs found by `pipeline_id = any(those ids)` in the environment: with the
 * project as a predicate on the joined pipelines, the planner could not tell how many runs it
 * keeps, and at 200,000 runs a `state=failed` page started from each pipeline and sorted every
 * failed run of the environment (46 ms against 3 ms on an empty store, docs/benchmarks.md
 * "History"), where the ids let it walk the filter's index newest first and stop at the page.
 * With a pipeline filter, the pipeline is found by its unique (project, slug) in the join.
 */
export async function listRuns(db: DbOrTx, place: PlaceOfRuns, query: RunsListQuery) {
  const filters: (SQL | undefined)[] = [];
  if (query.pipeline_slug) filters.push(inPlace(place), eq(pipelines.slug, query.pipeline_slug));
  else {
    const ids =
      place.pipelineIds ??
      (
        await db.select({ id: pipelines.id }).from(pipelines).where(eq(pipelines.projectId, place.projectId))
      ).map((r) => r.id);
    filters.push(
      eq(pipelineRuns.organizationId, place.organizationId),
      eq(pipelineRuns.environmentId, place.environmentId),
      // No pipeline: an impossible predicate keeps the page's shape (an empty page, its cursors).
      ids.length > 0 ? inArray(pipelineRuns.pipelineId, ids) : sql`false`,
    );
  }
  if (query.state) filters.push(eq(pipelineRuns.state, query.state));
  if (query.trigger) filters.push(eq(pipelineRuns.trigger, query.trigger));
  if (query.trigger_slug) filters.push(eq(pipelineRuns.triggerSlug, query.trigger_slug));
  return paginate({
    query,
    sorts: runSorts,
    tiebreak: pipelineRuns.slug,
    fetch: async ({ where, orderBy, limit }) =>
      (
        await db
          .select(listedColumns)
          .from(pipelineRuns)
          .innerJoin(pipelines, eq(pipelines.id, pipelineRuns.pipelineId))
          .innerJoin(environments, eq(environments.id, pipelineRuns.environmentId))
          .where(and(...filters, where))
          .orderBy(...orderBy)
          .limit(limit)
      ).map((r): RunListRow => ({ ...r, steps: r.steps.map(stepFromJson) })),
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
}

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
