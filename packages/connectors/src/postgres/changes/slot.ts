import type pg from 'pg';
import type { ConnectorContext } from '../../types';
import { ConnectorError } from '../../types';
import { closePg, connectPg, type PgConnection } from '../connect';
import { type CapturedTable, q } from './catalog';

// The server side of a capture (docs/cdc.md "How it works"): a publication of the captured
// tables and a logical replication slot (pgoutput), both named after the capture.

const CAPTURE = /^[a-z_][a-z0-9_]{0,62}$/;

export function checkCaptureName(capture: string): string {
  if (!CAPTURE.test(capture)) {
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `capture name ${JSON.stringify(capture)} is not a valid slot name`,
    );
  }
  return capture;
}

export type SlotState = { confirmed: string | null; active: boolean; pid: number | null } | null;

export async function slotState(client: pg.Client, capture: string): Promise<SlotState> {
  const r = await client.query<{ confirmed: string | null; active: boolean; pid: number | null }>(
    `SELECT confirmed_flush_lsn::text AS confirmed, active, active_pid AS pid
       FROM pg_catalog.pg_replication_slots WHERE slot_name = $1 AND database = current_database()`,
    [capture],
  );
  const row = r.rows[0];
  return row ? { confirmed: row.confirmed, active: row.active, pid: row.pid } : null;
}

/**
 * Waits (a few seconds at most) until no session holds the slot: a replication session that
 * just ended (this run's, or a lost attempt's whose worker died) lets go of it as its server
 * process exits, a moment after the socket closed.
 */
export async function waitReleased(client: pg.Client, capture: string, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await client.query<{ active: boolean }>(
      `SELECT active FROM pg_catalog.pg_replication_slots WHERE slot_name = $1 AND database = current_database()`,
      [capture],
    );
    if (!r.rows[0]?.active) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function dropSlot(client: pg.Client, capture: string): Promise<void> {
  await client.query(
    `SELECT pg_catalog.pg_drop_replication_slot(slot_name) FROM pg_catalog.pg_replication_slots
      WHERE slot_name = $1 AND database = current_database()`,
    [capture],
  );
}

const PUBLISH = 'insert, update, delete, truncate';

/**
 * The publication holds exactly the captured tables and publishes their inserts, updates,
 * deletes and truncates (docs/cdc.md "The rows"). Created when missing; a publication of that
 * name created beforehand by the tables' owner is used when it lists the tables, and made to
 * publish truncates too when the role may (one created by an earlier release did not). Answers
 * whether truncates are published.
 *
 * `covered`: the tables the committed position already covers. When the publication no longer
 * lists one of them (or is gone), pgoutput published nothing of that table since: a DROP TABLE
 * (the table perhaps created again since) or an ALTER PUBLICATION outside Sluice took it out
 * (docs/cdc.md "Changing the captured tables"). That is refused before anything is changed, so
 * every later run refuses too until the checkpoints are reset.
 */
export async function ensurePublication(
  client: pg.Client,
  capture: string,
  tables: CapturedTable[],
  covered: CapturedTable[] = [],
): Promise<{ truncates: boolean }> {
  const list = tables.map((t) => t.sql).join(', ');
  const r = await client.query<{ tables: string[] | null; truncates: boolean }>(
    `SELECT (SELECT array_agg(schemaname || '.' || tablename ORDER BY schemaname, tablename)
               FROM pg_catalog.pg_publication_tables pt WHERE pt.pubname = p.pubname) AS tables,
            p.pubtruncate AS truncates
       FROM pg_catalog.pg_publication p WHERE p.pubname = $1`,
    [capture],
  );
  const wanted = tables.map((t) => `${t.schema}.${t.table}`).sort();
  const have = r.rows.length === 0 ? null : [...(r.rows[0].tables ?? [])].sort();
  const truncates = r.rows[0]?.truncates === true;
  const gone = covered.filter((t) => have === null || !have.includes(`${t.schema}.${t.table}`));
  if (gone.length > 0) {
    throw new ConnectorError(
      'REMOTE_ERROR',
      `publication ${capture} ${have === null ? 'no longer exists' : `no longer lists ${gone.map((t) => t.name).join(', ')}`}: ` +
        `the table was dropped (perhaps created again) or taken out of the publication outside Sluice, and its changes since were not captured; ` +
        "reset the pipeline's checkpoints to take a new snapshot",
    );
  }
  if (have !== null && have.join('\n') === wanted.join('\n')) {
    if (truncates) return { truncates };
    return { truncates: await publishTruncates(client, capture) };
  }
  const statement =
    have === null
      ? `CREATE PUBLICATION ${q(capture)} FOR TABLE ${list} WITH (publish = '${PUBLISH}')`
      : `ALTER PUBLICATION ${q(capture)} SET TABLE ${list}`;
  try {
    await client.query(statement);
  } catch (err: any) {
    // Creating a publication takes CREATE on the database and owning the tables: the owner
    // can create it beforehand (docs/connectors/postgres.md "Least-privilege role").
    if (err?.code !== '42501') throw err;
    throw new ConnectorError(
      'PERMISSION_DENIED',
      `the role cannot ${have === null ? 'create' : 'change'} publication ${capture}: have the tables' owner run ${statement}`,
    );
  }
  return { truncates: have === null || truncates || (await publishTruncates(client, capture)) };
}

/**
 * Makes a publication publish truncates too; false when the role may not (not its owner).
 * Outside a transaction, as every caller is: a refusal leaves nothing to roll back.
 */
async function publishTruncates(client: pg.Client, capture: string): Promise<boolean> {
  try {
    await client.query(`ALTER PUBLICATION ${q(capture)} SET (publish = '${PUBLISH}')`);
    return true;
  } catch (err: any) {
    if (err?.code !== '42501') throw err;
    return false;
  }
}

export async function dropPublication(client: pg.Client, capture: string): Promise<void> {
  await client.query(`DROP PUBLICATION IF EXISTS ${q(capture)}`);
}

export type CreatedSlot = {
  /** From here on the slot has every change the snapshot does not. */
  consistentPoint: string;
  /** Imports the slot's snapshot into a transaction of `client` (valid until `close`). */
  importInto(client: pg.Client): Promise<void>;
  close(): Promise<void>;
};

/**
 * Creates the slot on a replication session and keeps that session open, so the snapshot it
 * exported can be imported (`SET TRANSACTION SNAPSHOT`) by the session that copies the tables.
 */
export async function createSlot(
  conn: PgConnection,
  ctx: ConnectorContext,
  capture: string,
): Promise<CreatedSlot> {
  const repl = await connectPg(conn, ctx, { replication: true });
  try {
    const r = await repl.query<{ consistent_point: string; snapshot_name: string }>(
      `CREATE_REPLICATION_SLOT ${q(capture)} LOGICAL pgoutput EXPORT_SNAPSHOT`,
    );
    const { consistent_point, snapshot_name } = r.rows[0];
    return {
      consistentPoint: consistent_point,
      async importInto(client) {
        await client.query(`SET TRANSACTION SNAPSHOT '${snapshot_name.replace(/'/g, "''")}'`);
      },
      close: () => closePg(repl),
    };
  } catch (err) {
    await closePg(repl);
    throw err;
  }
}
