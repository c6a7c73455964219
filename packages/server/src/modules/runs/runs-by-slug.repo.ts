import type { DbOrTx, Store } from '../../db/client';
import { executeNamedText } from '../../db/named';
import { pipelineRuns } from '../../db/schema/index';
import { literalLimit, paginate } from '../../http/pagination';
import {
  type PlaceOfRuns,
  type RunListRow,
  type RunPlace,
  type RunsListQuery,
  runSorts,
  STEPS_OF_RUN_SQL,
  type StepJson,
  stepFromJson,
} from './runs.repo';

// The reads of a `{pe}` URL by its slugs in statements written out once: the project environment
// (its ids, or with the project's pipelines), a run with its steps, a run's time bounds for its
// log, and the runs list's plain first page. Each is a named prepared statement with nothing built
// per request; the ORM's reads of runs are runs.repo.ts's.

/** `{pe}` of a URL: the project's and the environment's slugs. */
export type PeSlugs = { project: string; environment: string };

// The project environment of a URL by its slugs ($1 the organization, $2 the project, $3 the
// environment): the project, a live environment and the link between them, as
// findProjectEnvironment reads them; `columns` adds to its ids.
const peSql = (columns = '') => `pe as (
  select p.id as project_id, e.id as environment_id, e.slug as environment_slug${columns}
    from projects p
    join environments e on e.organization_id = $1 and e.slug = $3 and e.deleted_at is null
    join project_environments l on l.project_id = p.id and l.environment_id = e.id
   where p.organization_id = $1 and p.slug = $2
   limit 1)`;
const PE_SQL = peSql();
/** The project environment with its project's pipeline ids (uuid[]), for the reads of runs. */
const PE_WITH_PIPELINES_SQL = peSql(
  ',\n         array(select pl.id from pipelines pl where pl.project_id = p.id) as pipeline_ids',
);
/** A run's fields as a run resource shows them (toRun), aliased to RunRow's names, its steps too. */
const RUN_FIELDS_SQL = `"pipeline_runs".slug,
           (select pl.slug from pipelines pl where pl.id = "pipeline_runs".pipeline_id) as "pipelineSlug",
           "pipeline_runs".spec_hash as "specHash",
           "pipeline_runs".state, "pipeline_runs".trigger, "pipeline_runs".trigger_slug as "triggerSlug",
           "pipeline_runs".input_keys as "inputKeys", "pipeline_runs".attempt,
           "pipeline_runs".created_at as "createdAt", "pipeline_runs".started_at as "startedAt",
           "pipeline_runs".finished_at as "finishedAt", "pipeline_runs".error,
           "pipeline_runs".contract_checks as "contractChecks", ${STEPS_OF_RUN_SQL} as steps`;
/**
 * Runs of the project environment and of its project's pipelines, `where` them: no row without
 * the project environment, one row of nulls beside `head` with it but no such run. The project's
 * pipelines are an array the runs' `pipeline_id` is tested against, not a join: a join's row
 * estimate rests on the statistics of `pipelines`, which autovacuum never gathers on a store of
 * fewer than 50 pipelines (it analyzes a table once 50 rows changed), and from its default guess
 * of a few hundred rows the planner took the join for a filter that keeps 1 run in 200. It then
 * read and sorted every run of the environment for each first page instead of walking
 * `pipeline_runs_env_idx` newest first (3.5 against 0.8 ms at 3,000 runs, growing with them;
 * docs/benchmarks.md). A pipeline's slug is read for the runs of the page only.
 */
const runsInPeSql = (head: string, fields: string, where: string, tail = '') => `with ${PE_WITH_PIPELINES_SQL}
select ${head}, run.*
  from pe
  left join lateral (
    select ${fields}
      from pipeline_runs "pipeline_runs"
     where "pipeline_runs".pipeline_id = any(pe.pipeline_ids) and ${where}${tail}) run on true`;
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
export const firstPageSql = (limit: number) =>
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
const PLACE_WITH_PIPELINES_SQL = `with ${PE_WITH_PIPELINES_SQL}
select project_id as "projectId", environment_id as "environmentId", pipeline_ids::text[] as "pipelineIds"
  from pe`;

/** findPlace, and the ids of the project's pipelines. */
export async function findPlaceWithPipelines(
  db: DbOrTx,
  organizationId: string,
  slugs: PeSlugs,
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
  slugs: PeSlugs,
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
  slugs: PeSlugs,
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
 * The plain first page of the runs of a project environment given by its slugs, with the project
 * environment looked up in the same statement; null when the organization has no such project,
 * live environment or link between them.
 */
export async function listRunsFirstPage(
  store: Pick<Store, 'prepared'>,
  organizationId: string,
  slugs: PeSlugs,
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
  slugs: PeSlugs,
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
