import { type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../context';
import { dropPartitionsBefore, ensurePartitions, eventsHistory, runLogsHistory } from '../db/partitions';
import { defineJob } from './define';
import type { JobHandler } from './queue';

const payload = z.object({}).passthrough();

declare module './queue' {
  interface JobPayloads {
    'events.retention': typeof payload;
  }
}

const BATCH = 5_000;
const MAX_ROUNDS = 200;

/** Runs a `delete … limit BATCH` statement until it deletes less than a batch (or rounds run out). */
async function deleteInBatches(deps: Deps, statement: SQL): Promise<void> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const res: any = await deps.db.execute(statement);
    const n = res.affectedRows ?? res.rowCount ?? 0;
    if (n < BATCH) return;
  }
}

/** The longest event retention an organization can choose (docs/api-conventions.md). */
const MAX_EVENT_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * The hourly sweep: history partitions created ahead; event partitions older than the longest
 * retention and run-log partitions older than SLUICE_RUN_LOG_RETENTION_DAYS dropped whole; then
 * event records older than their organization's (shorter) retention, and expired app sessions
 * (lookups already ignore those; this only reclaims the rows).
 */
const pruneEvents =
  (deps: Deps): JobHandler<'events.retention'> =>
  async () => {
    const now = deps.clock?.() ?? new Date();
    await ensurePartitions(deps.db, eventsHistory, now);
    await ensurePartitions(deps.db, runLogsHistory, now);
    await dropPartitionsBefore(
      deps.db,
      eventsHistory,
      new Date(now.getTime() - MAX_EVENT_RETENTION_DAYS * DAY_MS),
    );
    const logDays = deps.config.runs.logRetentionDays;
    if (logDays > 0) {
      await dropPartitionsBefore(deps.db, runLogsHistory, new Date(now.getTime() - logDays * DAY_MS));
    }
    await deleteInBatches(
      deps,
      sql`
        delete from events where id in (
          select e.id from events e join organizations o on o.id = e.organization_id
          where e.occurred_at < now() - make_interval(days => o.event_log_retention_days)
          limit ${BATCH})`,
    );
    await deleteInBatches(
      deps,
      sql`delete from sessions where id in (select id from sessions where expires_at < now() limit ${BATCH})`,
    );
  };

export const eventsRetentionJob = defineJob({
  name: 'events.retention',
  payload,
  policy: { retry: { limit: 2, delaySeconds: 60, backoff: false }, expireInSeconds: 600 },
  // Hourly; pg-boss keeps one schedule per name across all workers.
  schedule: '7 * * * *',
  handler: pruneEvents,
});
