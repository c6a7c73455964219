import { type SQL, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../../db/client';
import { resetClaimedStepsSql } from './run-progress.repo';
import { boundJsonSql } from './run-sources.repo';
import type { RunRecord } from './runs.repo';

// A worker holds a run through a lease: an owner id and an expiry it keeps pushing forward with
// heartbeats. Every write a worker makes about its run is conditioned on still owning the lease,
// so a worker that lost it (paused, partitioned, presumed dead and recovered) can change nothing.

type Rows<T> = { rows?: T[] } | T[];
const rowsOf = <T>(res: Rows<T>): T[] => (Array.isArray(res) ? res : (res.rows ?? []));

const runColumns = (t: string) =>
  sql.raw(`${t}.id, ${t}.organization_id as "organizationId", ${t}.pipeline_id as "pipelineId",
  ${t}.environment_id as "environmentId", ${t}.slug, ${t}.spec_hash as "specHash", ${t}.state, ${t}."trigger",
  ${t}.input_keys as "inputKeys", ${t}.attempt, ${t}.lease_owner as "leaseOwner"`);
const RUN_COLUMNS = runColumns('pipeline_runs');

export type ClaimedRun = Pick<
  RunRecord,
  | 'id'
  | 'organizationId'
  | 'pipelineId'
  | 'environmentId'
  | 'slug'
  | 'specHash'
  | 'state'
  | 'trigger'
  | 'inputKeys'
  | 'attempt'
  | 'leaseOwner'
>;

/**
 * What the claim finds out besides the run, so the worker skips reads that would find nothing
 * (absent: read anyway).
 */
export type ClaimHints = {
  hasCheckpoints?: boolean;
  hasContracts?: boolean;
  /** boundJsonSql's value: the bound data sources, read with the claim. */
  bound?: unknown;
  /** The claim also reset the attempt's steps (it knew the plan). */
  stepsReset?: boolean;
};

/**
 * Takes a queued run for `owner`. Only a `queued` run can be claimed, so a run held by a live
 * lease (running or canceling) is never taken by a second worker; concurrent claims serialize on
 * the row and exactly one of them matches.
 */
export async function claimRun(
  db: DbOrTx,
  runId: string,
  owner: string,
  leaseSeconds: number,
): Promise<ClaimedWithHints | null> {
  const res = await db.execute(sql`
    update pipeline_runs set ${claimSet(owner, leaseSeconds)}
     where id = ${runId} and state = 'queued'
    returning ${CLAIM_RETURNING}`);
  return rowsOf<ClaimedWithHints>(res as Rows<ClaimedWithHints>)[0] ?? null;
}

export type ClaimedWithHints = ClaimedRun & ClaimHints & { runTimeoutSeconds: number | null };

/**
 * claimRun for the runs of the queue jobs in `taken` (id, data `{runId}`), as the CTEs of the
 * queue's fetch (jobs/queue.ts FetchWith): taking the job, claiming its run, reading what it
 * needs and (for a plan in `plans`, by `pipelineId:specHash`) resetting its steps are one
 * statement and one commit. Rows carry `job_id`; a job whose run is not queued has none.
 */
export function claimRunsOfJobsSql(
  taken: SQL,
  owner: string,
  leaseSeconds: number,
  plans: Record<string, string[]>,
): SQL {
  return sql`
    fetched_with as (
      update pipeline_runs set ${claimSet(owner, leaseSeconds)}
        from ${taken} t
       where pipeline_runs.id = ${runIdOf(sql.raw('t'))}
         and pipeline_runs.id = any(array(select ${runIdOf(taken)} from ${taken}))
         and pipeline_runs.state = 'queued'
      returning t.id as job_id, ${CLAIM_RETURNING},
        ${JSON.stringify(plans)}::jsonb ? (pipeline_runs.pipeline_id::text || ':' || pipeline_runs.spec_hash) as "stepsReset"
    ),
    ${resetClaimedStepsSql(sql.raw('fetched_with'), plans)}`;
}

// The run of a taken job (null for a malformed payload). Also as an array of keys: joined to
// `taken` alone, a plan for a table without statistics walked every queued run per fetch.
const runIdOf = (t: SQL) =>
  sql`(case when ${t}.data->>'runId' ~ '^[0-9a-fA-F-]{36}$' then ${t}.data->>'runId' end)::uuid`;

const claimSet = (owner: string, leaseSeconds: number) => sql`
  state = 'running', lease_owner = ${owner},
  lease_expires_at = now() + make_interval(secs => ${leaseSeconds}),
  heartbeat_at = now(), started_at = coalesce(started_at, now()), updated_at = now()`;

// The claimed run, its environment's time limit, and whether it has checkpoints and contracts.
const CLAIM_RETURNING = sql`${RUN_COLUMNS},
  (select e.run_timeout_seconds from environments e where e.id = pipeline_runs.environment_id) as "runTimeoutSeconds",
  exists (select 1 from pipeline_checkpoints k where k.pipeline_id = pipeline_runs.pipeline_id
             and k.environment_id = pipeline_runs.environment_id) as "hasCheckpoints",
  exists (select 1 from contracts c where c.pipeline_id = pipeline_runs.pipeline_id) as "hasContracts",
  ${boundJsonSql(sql.raw('pipeline_runs'))} as "bound"`;

export type LeaseStatus = { state: string; cancelRequested: boolean } | null;

/** Extends the lease while `owner` still holds it; null when it was lost. */
export async function renewLease(
  db: DbOrTx,
  runId: string,
  owner: string,
  leaseSeconds: number,
): Promise<LeaseStatus> {
  const res = await db.execute(sql`
    update pipeline_runs
       set lease_expires_at = now() + make_interval(secs => ${leaseSeconds}), heartbeat_at = now()
     where id = ${runId} and lease_owner = ${owner} and state in ('running', 'canceling')
    returning state, cancel_requested_at is not null as "cancelRequested"`);
  return rowsOf<{ state: string; cancelRequested: boolean }>(res as Rows<any>)[0] ?? null;
}

export type OwnedRun = ClaimedRun & {
  /** Slugs and name of the run's place, for what the end of the run raises. */
  place: { pipeline: string; pipelineName: string; project: string; environment: string };
};

/** The run, locked, if `owner` still holds it (the start of every final transition). */
export async function lockOwnedRun(tx: Tx, runId: string, owner: string): Promise<OwnedRun | null> {
  const res = await tx.execute(sql`
    select ${runColumns('r')},
           json_build_object('pipeline', p.slug, 'pipelineName', p.name, 'project', pr.slug,
                             'environment', e.slug) as place
      from pipeline_runs r
      join pipelines p on p.id = r.pipeline_id
      join projects pr on pr.id = p.project_id
      join environments e on e.id = r.environment_id
     where r.id = ${runId} and r.lease_owner = ${owner} and r.state in ('running', 'canceling')
     for update of r`);
  return rowsOf<OwnedRun>(res as Rows<OwnedRun>)[0] ?? null;
}

/**
 * Runs whose worker stopped heartbeating, locked. SKIP LOCKED: two sweeps running at once split
 * the work instead of both recovering the same run.
 */
export async function lockExpiredRuns(tx: Tx, limit: number): Promise<ClaimedRun[]> {
  const res = await tx.execute(sql`
    select ${RUN_COLUMNS} from pipeline_runs
     where state in ('running', 'canceling') and lease_expires_at < now()
     order by lease_expires_at
     limit ${limit}
     for update skip locked`);
  return rowsOf<ClaimedRun>(res as Rows<ClaimedRun>);
}
