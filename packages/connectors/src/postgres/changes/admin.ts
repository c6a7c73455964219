import type { CaptureStatus, ConnectorContext } from '../../types';
import { closePg, connectPg, type PgConnection, pgError } from '../connect';
import { dropPublication, dropSlot } from './slot';

// The captures on a PostgreSQL server and their release (docs/cdc.md "Slot safety"): the
// replication slots whose names start with the prefix, with the WAL they hold back.

export async function pgCaptures(
  conn: PgConnection,
  prefix: string,
  ctx: ConnectorContext,
): Promise<CaptureStatus[]> {
  const client = await connectPg(conn, ctx);
  try {
    const r = await client.query<{
      name: string;
      active: boolean;
      confirmed: string | null;
      lag: string | null;
    }>(
      `SELECT slot_name::text AS name, active, confirmed_flush_lsn::text AS confirmed,
              pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint::text AS lag
         FROM pg_catalog.pg_replication_slots
        WHERE database = current_database() AND starts_with(slot_name::text, $1)
        ORDER BY slot_name`,
      [prefix],
    );
    return r.rows.map((row) => ({
      name: row.name,
      active: row.active,
      confirmed_position: row.confirmed,
      lag_bytes: row.lag === null ? null : Number(row.lag),
    }));
  } catch (err) {
    throw pgError(err, conn);
  } finally {
    await closePg(client);
  }
}

export async function pgRelease(conn: PgConnection, capture: string, ctx: ConnectorContext): Promise<void> {
  const client = await connectPg(conn, ctx);
  try {
    await dropSlot(client, capture);
    await dropPublication(client, capture);
  } catch (err) {
    throw pgError(err, conn);
  } finally {
    await closePg(client);
  }
}
