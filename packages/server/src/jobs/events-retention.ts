import { type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Deps } from '../context';
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

/**
 * The hourly sweep: event records older than their organization's retention, then expired app
 * sessions (lookups already ignore those; this only reclaims the rows).
 */
const pruneEvents =
  (deps: Deps): JobHandler<'events.retention'> =>
  async () => {
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
