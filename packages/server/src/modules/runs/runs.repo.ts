import { and, asc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { DbOrTx, Store, Tx } from '../../db/client';
import { executeNamedText } from '../../db/named';
import {
  environments,
  pipelineRunInputs,
  pipelineRunSteps,
  pipelineRuns,
  pipelines,
} from '../../db/schema/index';
import { isoOfTimestamptz } from '../../db/timestamptz';
import { type ListQuery, literalLimit, paginate } from '../../http/pagination';

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

/**
 * A listed run's steps, read in the page's own statement (one round trip for the page instead of
 * two; docs/scaling.md), in plan order as stepsOfRuns reads them. Raw text on "pipeline_runs":
 * the ORM's page and firstPageSql share it. Only what a step resource shows (toStep): the two
 * ids were a third of the JSON every page request parses.
 */
const STEPS_OF_RUN_SQL = `(
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
type StepJson = ListedStep;
/** The JSON's times (json_build_object's text) in place, in ISO: a list page makes no Date. */
const stepFromJson = (s: StepJson): ListedStep => {
  if (s.startedAt !== null) s.startedAt = isoOfTimestamptz(s.startedAt);
  if (s.finishedAt !== null) s.finishedAt = isoOfTimestamptz(s.finishedAt);
  return s;
};

const runSorts = { run_created_at: { column: pipelineRuns.createdAt, kind: 'timestamp' } } as const;

// The project environment of a URL by its slugs ($1 the organization, $2 the project, $3 the
// environment): the project, a live environment and the link between them, as
// findProjectEnvironment reads them.
const PE_SQL = `pe as (
  select p.id as project_id, e.id as environment_id, e.slug as environment_slug
    from projects p
    join environments e on e.organization_id = $1 and e.slug = $3 and e.deleted_at is null
    join project_environments l on l.project_id = p.id and l.environment_id = e.id
   where p.organization_id = $1 and p.slug = $2
   limit 1)`;
/** A run's fields as a run resource shows them (toRun), aliased to RunRow's names, its steps too. */
const RUN_FIELDS_SQL = `"pipeline_runs".slug, pl.slug as "pipelineSlug", "pipeline_runs".spec_hash as "specHash",
           "pipeline_runs".state, "pipeline_runs".trigger, "pipeline_runs".trigger_slug as "triggerSlug",
           "pipeline_runs".input_keys as "inputKeys", "pipeline_runs".attempt,
           "pipeline_runs".created_at as "createdAt", "pipeline_runs".started_at as "startedAt",
           "pipeline_runs".finished_at as "finishedAt", "pipeline_runs".error,
           "pipeline_runs".contract_checks as "contractChecks", ${STEPS_OF_RUN_SQL} as steps`;
/**
 * Runs of the project environment (PE_SQL) and of its project's pipelines, `where` them: no row
 * without the project environment, one row of nulls beside `head` with it but no such run.
 */
const runsInPeSql = (head: string, fields: string, where: string, tail = '') => `with ${PE_SQL}
select ${head}, run.*
  from pe
  left join lateral (
    select ${fields}
      from pipeline_runs "pipeline_runs"
      join pipelines pl on pl.id = "pipeline_runs".pipeline_id and pl.project_id = pe.project_id
     where ${where}${tail}) run on true`;
const ENVIRONMENT_SLUG = 'pe.environment_slug as "environmentSlug"';
// The first page, newest first, without filters (what a console polls): the project
// environment of the URL and the page in one raw statement on a named prepared statement, with no
// SQL built per request and no ORM row mapping. No row: the project environment is not there;
// one row with a null slug: it is, with no runs. Aliased to RunRow's field names. The runs are
// found by their environment alone (`pe` is the organization's): with the organization too, a
// planner with stale statistics (a young store, 1,500 runs since the last ANALYZE) combined
// both indexes and sorted every run of the environment for each page (10 ms at 1,000 runs,
// docs/benchmarks.md), where the environment's index gives the newest in order. The page's size
// is in the text (literalLimit), one statement name per size: bound, the statement was planned
// on every execution on a store of 10M runs (+0.3 ms a page, docs/benchmarks.md "History").
const firstPageSql = (limit: number) =>
  runsInPeSql(
    ENVIRONMENT_SLUG,
    RUN_FIELDS_SQL,
    '"pipeline_runs".environment_id = pe.environment_id',
    `
     order by "pipeline_runs".created_at desc, "pipeline_runs".slug desc
     limit ${literalLimit(limit)}`,
  );
/** The run `$4` (slugs are unique in the organization) of the project environment. */
const BY_SLUG =
  '"pipeline_runs".organization_id = $1 and "pipeline_runs".slug = $4 and "pipeline_runs".environment_id = pe.environment_id';

// The project environment of a URL, its ids only (every `{pe}` route of runs, checkpoints and
// logs, inside a transaction too): written out, nothing built per request.
const PLACE_SQL = `with ${PE_SQL}
select project_id as "projectId", environment_id as "environmentId" from pe`;

// The same with the ids of the project's pipelines, which a runs list without a pipeline filter
// reads its runs by (listRuns): one statement instead of two.
const PLACE_WITH_PIPELINES_SQL = `with ${PE_SQL}
select project_id as "projectId", environment_id as "environmentId",
       array(select pl.id::text from pipelines pl where pl.project_id = pe.project_id) as "pipelineIds"
  from pe`;

/** A runs list's place: with `pipelineIds`, the project's pipelines are not read again. */
export type PlaceOfRuns = RunPlace & { pipelineIds?: string[] };

/** findPlace, and the ids of the project's pipelines. */
export async function findPlaceWithPipelines(
  db: DbOrTx,
  organizationId: string,
  slugs: { project: string; environment: string },
): Promise<Required<PlaceOfRuns> | null> {
  const [row] = await executeNamedText(db, PLACE_WITH_PIPELINES_SQL, [
    organizationId,
    slugs.project,
    slugs.environment,
  ]);
  if (!row) return null;
  return {
    organizationId,
    projectId: row.projectId,
    environmentId: row.environmentId,
    pipelineIds: row.pipelineIds,
  };
}

/** The ids of the project environment given by its slugs, or null (PE_SQL). */
export async function findPlace(
  db: DbOrTx,
  organizationId: string,
  slugs: { project: string; environment: string },
): Promise<RunPlace | null> {
  const [row] = await executeNamedText(db, PLACE_SQL, [organizationId, slugs.project, slugs.environment]);
  return row ? { organizationId, projectId: row.projectId, environmentId: row.environmentId } : null;
}

// What a run's log read needs of the run (its id and time bounds), with its project environment,
// in one statement: the runs and their pipeline only.
const RUN_SPAN_BY_SLUG_SQL = runsInPeSql(
  'pe.project_id as "projectId"',
  '"pipeline_runs".id, "pipeline_runs".created_at as "createdAt", "pipeline_runs".finished_at as "finishedAt"',
  BY_SLUG,
);

/**
 * The id and time bounds of the run `runSlug` of the project environment given by its slugs:
 * null when there is no such project environment, `{ run: null }` when it has no such run.
 */
export async function findRunSpanBySlugs(
  store: Pick<Store, 'prepared'>,
  organizationId: string,
  slugs: { project: string; environment: string },
  runSlug: string,
): Promise<{ run: { id: string; createdAt: Date; finishedAt: Date | null } | null } | null> {
  const { rows } = await store.prepared('sluice_run_span_by_slug', RUN_SPAN_BY_SLUG_SQL, [
    organizationId,
    slugs.project,
    slugs.environment,
    runSlug,
  ]);
  const [row] = rows;
  if (!row) return null;
  if (row.id === null) return { run: null };
  return { run: { id: row.id, createdAt: row.createdAt, finishedAt: row.finishedAt } };
}

// One run of the project environment given by its slugs (GET …/runs/{run_slug}, which
// `execute --wait` and the app's live run page poll): the project environment, the run by its
// slug (unique in the organization) and its steps in one statement, as the first page reads them.
const RUN_BY_SLUG_SQL = runsInPeSql(ENVIRONMENT_SLUG, RUN_FIELDS_SQL, BY_SLUG);

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

/**
 * The plain first page of the runs of a project environment given by its slugs, with the project
 * environment looked up in the same statement; null when the organization has no such project,
 * live environment or link between them.
 */
export async function listRunsFirstPage(
  store: Pick<Store, 'prepared'>,
  organizationId: string,
  slugs: { project: string; environment: string },
  query: RunsListQuery,
) {
  let found = false;
  const page = await paginate<RunListRow>({
    query,
    sorts: runSorts,
    tiebreak: pipelineRuns.slug,
    fetch: async ({ limit }) => {
      const { rows } = await store.prepared(
        `sluice_runs_first_page_${limit}`,
        firstPageSql(limit),
        [organizationId, slugs.project, slugs.environment],
        { isoTimes: true },
      );
      found = rows.length > 0;
      return rows
        .filter((r) => r.slug !== null)
        .map((r) => ({ ...r, steps: (r.steps as StepJson[]).map(stepFromJson) }) as RunListRow);
    },
    keyOf: (r) => ({ value: r.createdAt, id: r.slug }),
  });
  return found ? page : null;
}

/**
 * The run `runSlug` of the project environment given by its slugs, with its steps, in one
 * statement (RUN_BY_SLUG_SQL): null when the organization has no such project, live environment
 * or link between them; `{ run: null }` when it has, without that run.
 */
export async function findRunBySlugs(
  store: Pick<Store, 'prepared'>,
  organizationId: string,
  slugs: { project: string; environment: string },
  runSlug: string,
): Promise<{ run: RunListRow | null } | null> {
  const { rows } = await store.prepared(
    'sluice_run_by_slug',
    RUN_BY_SLUG_SQL,
    [organizationId, slugs.project, slugs.environment, runSlug],
    { isoTimes: true },
  );
  const [row] = rows;
  if (!row) return null;
  if (row.slug === null) return { run: null };
  return { run: { ...row, steps: (row.steps as StepJson[]).map(stepFromJson) } as RunListRow };
}

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
