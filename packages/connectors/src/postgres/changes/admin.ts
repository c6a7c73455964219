import type pg from 'pg';
import { type CaptureStatus, type ConnectorContext, ConnectorError } from '../../types';
import { closePg, connectPg, type PgConnection, pgError } from '../connect';
import { LOCK_SPACE, STREAM_APPLICATION } from './session-names';

// Slot safety on PostgreSQL (docs/cdc.md "Slot safety"): what a capture's replication slot
// keeps, and dropping the slot and publication a capture created. Both read and write the
// server catalog only, so they open their own short session, never a read-only one (a
// read-only data source is still the pipeline's source, and its captures are ours to drop).

/** Capture names are ours (`sluice_` and hex digits), so they are plain identifiers. */
const CAPTURE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** How long release waits for a terminated reader to let go of its slot. */
const RELEASE_WAIT_MS = 5_000;

type SlotRow = {
  name: string;
  active: boolean;
  active_pid: number | null;
  confirmed: string | null;
  retained: string | null;
  wal_status: string | null;
  safe_wal_size: string | null;
};

// The server's position: pg_current_wal_lsn() refuses to run on a standby, where the
// received position is the one slots follow.
// \`active\`: a reader is on the slot. A read's own replication session (STREAM_APPLICATION) that
// a worker keeps idle between runs (docs/cdc.md "The replication session") counts only while a
// read holds the capture's advisory lock (take-over.ts: key space 0x51ce, hashtext of the name).
const SLOTS_SQL = `
  SELECT s.slot_name AS name,
         s.active AND (a.application_name IS DISTINCT FROM '${STREAM_APPLICATION}' OR EXISTS (
           SELECT 1 FROM pg_catalog.pg_locks l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
              AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
              AND l.classid = ${LOCK_SPACE}
              AND l.objid = (pg_catalog.hashtext(s.slot_name)::bigint & 4294967295)::oid)) AS active,
         s.active_pid,
         s.confirmed_flush_lsn::text AS confirmed,
         pg_wal_lsn_diff(
           CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() ELSE pg_current_wal_lsn() END,
           s.restart_lsn)::text AS retained,
         s.wal_status, s.safe_wal_size::text AS safe_wal_size
    FROM pg_replication_slots s
    LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = s.active_pid
   WHERE s.database = current_database() AND s.slot_type = 'logical'
     AND left(s.slot_name, length($1)) = $1
   ORDER BY s.slot_name`;

const toNumber = (v: string | null) => (v === null ? null : Number(v));

function toStatus(r: SlotRow): CaptureStatus {
  return {
    name: r.name,
    active: r.active,
    confirmed_position: r.confirmed,
    lag_bytes: toNumber(r.retained),
    wal_status: r.wal_status,
    safe_wal_bytes: toNumber(r.safe_wal_size),
  };
}

async function withSession<T>(conn: PgConnection, ctx: ConnectorContext, work: (c: pg.Client) => Promise<T>) {
  const client = await connectPg(conn, ctx, { readOnly: false });
  try {
    return await work(client);
  } catch (err) {
    throw pgError(err, conn);
  } finally {
    await closePg(client);
  }
}

/**
 * The logical slots of the data source's database whose names start with `prefix`, with the
 * WAL each one holds back: `lag_bytes` is pg_wal_lsn_diff(current position, restart_lsn), the
 * bytes the server may not recycle because of the slot (what fills the source's disk).
 */
export async function pgCaptures(
  conn: PgConnection,
  prefix: string,
  ctx: ConnectorContext,
): Promise<CaptureStatus[]> {
  return withSession(conn, ctx, async (client) => {
    const r = await client.query<SlotRow>(SLOTS_SQL, [prefix]);
    return r.rows.map(toStatus);
  });
}

/**
 * Drops the capture's slot (terminating the session that holds it, if any) and the
 * publication of the same name. Either may be missing already: that is no error, so a retried
 * release ends in the same state.
 */
export async function pgRelease(conn: PgConnection, capture: string, ctx: ConnectorContext): Promise<void> {
  if (!CAPTURE_NAME.test(capture)) {
    throw new ConnectorError('INVALID_STATEMENT', `${JSON.stringify(capture)} is not a capture name`);
  }
  await withSession(conn, ctx, async (client) => {
    const deadline = Date.now() + RELEASE_WAIT_MS;
    for (;;) {
      const r = await client.query<{ active_pid: number | null }>(
        'SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()',
        [capture],
      );
      if (r.rows.length === 0) break;
      const pid = r.rows[0].active_pid;
      if (pid === null) {
        try {
          await client.query('SELECT pg_drop_replication_slot($1)', [capture]);
          break;
        } catch (err: any) {
          // 42704: dropped meanwhile; 55006: a reader took it meanwhile (terminated next round).
          if (err?.code === '42704') break;
          if (err?.code !== '55006') throw err;
        }
      } else {
        await client.query('SELECT pg_terminate_backend($1)', [pid]);
      }
      if (Date.now() > deadline) {
        throw new ConnectorError(
          'REMOTE_ERROR',
          `replication slot ${capture} is still in use by another session; stop its reader and try again`,
          { retryable: true },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await client.query(`DROP PUBLICATION IF EXISTS ${capture}`);
  });
}
