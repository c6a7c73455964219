import type pg from 'pg';
import { PgoutputParser } from 'pg-logical-replication/dist/output-plugins/pgoutput/pgoutput-parser.js';
import { MARKER_PREFIX } from './decode';

// Run markers (docs/cdc.md "Exactly once"), logical messages written into the log itself, in
// their own small transactions:
// - a start marker when a read begins: the read hands on what committed before it, and its
//   position is the end of that transaction even when no captured table changed;
// - an end marker just before a read hands on its last row, with the position it will return.
//   The sinks commit after that. When the worker dies before the run's checkpoint is
//   committed, the run's next attempt finds the marker in the slot and hands on exactly the
//   same rows and position again, so the sinks' ledgers (which skip the repeated write) and
//   the checkpoint agree: nothing lost, nothing twice.

type EndMarker = { capture: string; run: string; cursor: string };

export async function writeMarker(client: pg.Client, content: string): Promise<void> {
  await client.query('SELECT pg_catalog.pg_logical_emit_message(true, $1, $2)', [MARKER_PREFIX, content]);
}

export const endMarker = (m: EndMarker) => JSON.stringify({ end: m });

/** The cursor a former attempt of `run` returned, when its end marker is still in the slot. */
export async function findEndMarker(client: pg.Client, capture: string, run: string): Promise<string | null> {
  const r = await client.query<{ data: Buffer }>({
    text: `SELECT data FROM pg_catalog.pg_logical_slot_peek_binary_changes($1, NULL, NULL,
             'proto_version', '1', 'publication_names', $2::text, 'messages', 'true')
            WHERE get_byte(data, 0) = 77`,
    values: [capture, capture],
  });
  const parser = new PgoutputParser();
  let found: string | null = null;
  for (const { data } of r.rows) {
    const msg = parser.parse(data);
    if (msg.tag !== 'message' || msg.prefix !== MARKER_PREFIX) continue;
    try {
      const m = (JSON.parse(Buffer.from(msg.content).toString('utf8')) as { end?: EndMarker }).end;
      if (m && m.capture === capture && m.run === run && typeof m.cursor === 'string') found = m.cursor;
    } catch {
      // Not one of ours.
    }
  }
  return found;
}
