import { type SQL, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { executeNamed } from '../../db/named';
import { closingRows, type Progress } from './run-progress.repo';

// The usual end of a run as one statement: a run that succeeded (or was canceled) and has nothing
// else to decide on the way (no notification to resolve) ends with its queue job, checkpoints,
// last progress, sealed input and event in a single statement and commit (the caller wraps it in
// a transaction, so a worker that dies while it waits for the row never commits it). Everything is
// conditioned on the run's own update, which only matches while `owner` holds the lease: the
// same lock → check → write → emit as the transaction of run-lifecycle.service.ts, in SQL.

export type EndAtOnce = {
  runId: string;
  owner: string;
  state: 'succeeded' | 'canceled';
  progress: Progress;
  /** Cursors to commit (a succeeded attempt's, also when a cancel wins over its success). */
  cursors: Record<string, string>;
  /** A condition on the run `r` that needs the transaction instead (the row is left as it was). */
  blockedBy: (r: SQL) => SQL;
  /** CTE bodies written with the end, given the guard "the run was ended" and its row. */
  job: ((guard: SQL) => SQL) | null;
  event: (ended: SQL) => SQL;
};

/** 'ended'; 'lost' when `owner` no longer holds the run; 'blocked' when the transaction must do it. */
export async function endRunAtOnce(db: DbOrTx, a: EndAtOnce): Promise<'ended' | 'lost' | 'blocked'> {
  const rows = await executeNamed(db, endRunSql(a));
  const row = rows[0] as { state: string | null; owned: boolean };
  if (row.state) return 'ended';
  return row.owned ? 'blocked' : 'lost';
}

/** The statement of endRunAtOnce (its text is the same for every run: the values are parameters). */
export function endRunSql(a: EndAtOnce): SQL {
  const now = new Date().toISOString();
  const ended = sql.raw('ended');
  const wasEnded = sql.raw('exists (select 1 from ended)');
  // A cancel that arrived while the run was ending wins (canceling only leads to canceled).
  const allowed =
    a.state === 'canceled'
      ? sql.raw('true')
      : sql`(r.state = 'canceling' or not ${a.blockedBy(sql.raw('r'))})`;
  return sql`
    with ended as (
      update pipeline_runs r
         set state = case when r.state = 'canceling' then 'canceled' else ${a.state} end, error = null,
             finished_at = ${now}::timestamptz, lease_owner = null, lease_expires_at = null,
             updated_at = ${now}::timestamptz
       where r.id = ${a.runId}::uuid and r.lease_owner = ${a.owner} and r.state in ('running', 'canceling')
         and ${allowed}
      returning r.id, r.state, r.organization_id, r.pipeline_id, r.environment_id, r.slug, r.attempt
    ),
    ${a.job ? sql`job as (${a.job(wasEnded)}),` : sql``}
    kept as (
      insert into pipeline_checkpoints (organization_id, pipeline_id, environment_id, step_slug, cursor, run_id)
      select ended.organization_id, ended.pipeline_id, ended.environment_id, c.key, c.value, ended.id
        from ended, jsonb_each_text(${JSON.stringify(a.cursors)}::jsonb) c
      on conflict (pipeline_id, environment_id, step_slug)
      do update set cursor = excluded.cursor, run_id = excluded.run_id, updated_at = now()
    ),
    ${closingRows(a.runId, now, a.progress, wasEnded)},
    ev as (${a.event(ended)})
    select (select state from ended) as state,
           exists (select 1 from pipeline_runs where id = ${a.runId}::uuid and lease_owner = ${a.owner}
                      and state in ('running', 'canceling')) as owned`;
}
