import type pg from 'pg';
import { LOCK_SPACE, STREAM_APPLICATION } from './session-names';
import { waitReleased } from './slot';

// Who may end a replication session on a capture's slot (docs/cdc.md "The replication
// session"). Every read holds the capture's advisory lock (on the source database, in its SQL
// session) from before it looks at the slot until that session ends, and a read's replication
// session is named STREAM_APPLICATION. So a session of that name on the slot while the lock is
// free, or held by this read, belongs to no read: a former read left it idle for the next one
// (in another worker process), or its worker died and the server has not noticed yet. The read
// holding the lock may end it. A session of any other name (a user's pg_recvlogical) is never ended.

/** How long a read waits for another read of the capture to end. */
const LOCK_WAIT_MS = 5_000;

export async function lockCapture(client: pg.Client, capture: string): Promise<boolean> {
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const r = await client.query<{ ok: boolean }>(
      'SELECT pg_catalog.pg_try_advisory_lock($1::int, pg_catalog.hashtext($2)) AS ok',
      [LOCK_SPACE, capture],
    );
    if (r.rows[0].ok) return true;
    // Another read of the capture (in any process) is running: the slot check then refuses.
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Best effort: the session's reset (DISCARD ALL) or its end lets go of it too. */
export async function unlockCapture(client: pg.Client, capture: string): Promise<void> {
  await client
    .query('SELECT pg_catalog.pg_advisory_unlock($1::int, pg_catalog.hashtext($2))', [LOCK_SPACE, capture])
    .catch(() => {});
}

/**
 * The slot is active: with the capture's lock (`locked`), ends an idle read's session on it;
 * then waits a few seconds for the slot to be free (a dying session). True when it is free.
 */
export async function takeOver(client: pg.Client, capture: string, locked: boolean): Promise<boolean> {
  if (locked) {
    await client.query(
      `SELECT pg_catalog.pg_terminate_backend(s.active_pid)
         FROM pg_catalog.pg_replication_slots s
         JOIN pg_catalog.pg_stat_activity a ON a.pid = s.active_pid
        WHERE s.slot_name = $1 AND s.database = current_database() AND a.application_name = $2`,
      [capture, STREAM_APPLICATION],
    );
  }
  return waitReleased(client, capture);
}
