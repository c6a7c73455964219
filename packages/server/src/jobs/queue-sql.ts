// The queue's statements on pg-boss's tables (jobs/queue.ts consumes and announces with them):
// the fetch of a consumer, a job's insert inside a caller's statement, the ready check.
import { type SQL, sql } from 'drizzle-orm';
import { TIME_ORDERED_ID_SQL } from '../db/ids';

/**
 * CTEs run by the fetch itself, over `taken` (the jobs it took: id, data), one of them named
 * `fetched_with` with a `job_id` column: the handler gets its job's row as `fetchedWith`. E.g.
 * the run worker claims the runs of its jobs in the same statement and commit as it takes them.
 * Built for every fetch, so it may carry what the process knows at that moment.
 */
export type FetchWith = (taken: SQL) => SQL;

/**
 * NOTIFY channel of the queues. A new job's payload is `<queue>:<count>:<sender tag>:<sequence>`
 * (the sender's tag is `-` for a job sent inside a caller's transaction by `enqueue`); the
 * sequence, the sender's count of its announcements, names the one worker that answers it (by
 * the order of their tags, among the workers present), so one worker fetches a new job, not all.
 * A bare `<queue>` (an older sender) is answered by every worker. Workers make themselves known
 * with `here:<tag>` (when they start listening, to a worker heard for the first time, and every
 * PRESENCE_MS of jobs/queue-presence.ts) and leave with `bye:<tag>`. Nothing is said when a job is taken:
 * a worker that heard of jobs named to others looks, once per READY_CHECK_MS (queue-consumers.ts) and only while it
 * has a free slot, whether any is still waiting (a statement, no NOTIFY), which covers a named
 * worker that was busy or is gone. `taken:…` notifications of older workers are ignored.
 */
export const JOBS_CHANNEL = 'sluice_jobs';

/**
 * The fetch of a consumer, on pg-boss's table (the semantics of its fetchNextJob for our queues,
 * all of policy `standard`): up to `limit` jobs marked active, and the consumer's `fetchWith`.
 * `lazy`: it commits without waiting for its WAL flush.
 */
export function fetchSql(
  name: string,
  table: string,
  limit: number,
  fetchWith: FetchWith | undefined,
  lazy: boolean,
): SQL {
  const extra = fetchWith ? sql`, ${fetchWith(sql.raw('taken'))}` : sql``;
  const joined = fetchWith
    ? sql`, to_jsonb(w) as "fetchedWith" from taken t left join fetched_with w on w.job_id = t.id`
    : sql` from taken t`;
  // With other workers about, the fetch commits without waiting for its WAL flush (as it did while
  // it NOTIFYed `taken`, before 2026-11-29): a slow flush would otherwise pace every worker's
  // fetches. Its claims become durable with the next commit that flushes (the job's completion at
  // the latest); a server crash before that leaves the job and its run queued again, as a worker
  // dying before it started would. `lazy` runs only when its value is asked for.
  const settings = lazy ? sql`, lazy as (select set_config('synchronous_commit', 'off', true))` : sql``;
  const lazyColumn = lazy ? sql`, (select count(*) from lazy) as lazy` : sql``;
  // On the queue's own partition of pgboss.job (every row of `name` is there): planned for the
  // parent, the statement would be planned anew on every call, as its generic plan over every
  // queue's partition never looks cheaper than one pruned to this queue (db/named.ts). The
  // taken jobs are found by their key as an array: joined to `next`, a plan for a table without
  // statistics walked every job of the queue, completed ones too, once per fetch.
  const jobs = sql`pgboss.${sql.identifier(table)}`;
  return sql`
    with next as (
      select id from ${jobs}
       where name = ${name} and state < 'active' and start_after < now()
       order by priority desc, created_on, id
       limit ${limit}
       for update skip locked
    ), taken as (
      update ${jobs} j
         set state = 'active', started_on = now(),
             retry_count = case when j.started_on is not null then j.retry_count + 1 else j.retry_count end
       where j.name = ${name} and j.id = any(array(select id from next))
      returning j.id, j.data, j.retry_count
    )${settings}${extra}
    select t.id, t.data, t.retry_count as "retryCount"${lazyColumn}${joined}`;
}

/**
 * pg-boss 10's insert of one job (its `insertJob`, without singletons, priority or delay: what
 * `send` writes for a plain job of a queue created by openQueue), one per row of `from`, with the
 * announcement `notify` for each job inserted (none when null). The job's id grows with time
 * (docs/operations.md#row-ids).
 */
export function jobInsertSql(name: string, data: unknown, from: SQL, notify: string | null): SQL {
  return sql`
    insert into pgboss.job (id, name, data, priority, start_after, dead_letter, expire_in, keep_until,
                            retry_limit, retry_delay, retry_backoff, policy)
    select ${sql.raw(TIME_ORDERED_ID_SQL)}, q.name, ${JSON.stringify(data)}::jsonb, 0, now(), q.dead_letter,
           coalesce(q.expire_seconds, 900) * interval '1s',
           now() + coalesce((q.retention_minutes * 60)::text, '14 days')::interval,
           coalesce(q.retry_limit, 2),
           case when coalesce(q.retry_backoff, false) then greatest(coalesce(q.retry_delay, 0), 1)
                else coalesce(q.retry_delay, 0) end,
           coalesce(q.retry_backoff, false), q.policy
      from pgboss.queue q, ${from}
     where q.name = ${name}
    returning id${notify === null ? sql`` : sql`, pg_notify(${JOBS_CHANNEL}, ${notify})`}`;
}

/** The polled queues ($1) with a job ready: one statement per poll for all of them. */
export const READY_SQL = `
  select q.name from unnest($1::text[]) as q(name)
   where exists (select 1 from pgboss.job j
                  where j.name = q.name and j.state < 'active' and j.start_after < now())`;
