import type pg from 'pg';
import type { CapturedTable } from './catalog';
import type { ChangeDecoder } from './decode';
import { compareLsn } from './lsn';

// The changes of one run (docs/cdc.md "Runs"): the slot's changes from its confirmed position
// up to this read's start marker, read with pg_logical_slot_peek_binary_changes (the slot is not
// moved: it advances to a position only once the run that read up to there committed).
// Decoded rows leave in batches as they come; the run stops after a whole transaction once it
// has `maxChanges` changes or its time is up.

const FETCH = 5000;
const CURSOR = 'sluice_cdc_changes';

export type StreamBounds = {
  capture: string;
  from: string;
  /** A log position at or after the start marker's commit (or, replaying, the position to reach). */
  upto: string;
  /** Replaying a former attempt: no count or time bound; the read ends at `upto`. */
  replay: boolean;
  /** The content of this read's start marker: the read ends with its transaction. */
  marker: string | null;
  maxChanges: number;
  timeUp(): boolean;
  /** A table came with a shape other than the catalog's at the start (before its next change). */
  onShape?(table: CapturedTable): Promise<void>;
};

export function streamChanges(client: pg.Client, decoder: ChangeDecoder, b: StreamBounds) {
  let position = b.from;
  async function* batches(): AsyncGenerator<unknown[][]> {
    // The server stops decoding after the transaction in which it produced this many messages
    // (a change, its transaction's begin and commit, a table's description): enough for
    // maxChanges changes, never the whole backlog.
    const limit = b.replay ? null : b.maxChanges * 3 + 100;
    await client.query('BEGIN');
    await client.query({
      text: `DECLARE ${CURSOR} NO SCROLL CURSOR FOR
               SELECT lsn::text, data FROM pg_catalog.pg_logical_slot_peek_binary_changes($1, $2::pg_lsn, $3::int,
                 'proto_version', '1', 'publication_names', $4::text, 'messages', 'true')`,
      values: [b.capture, b.upto, limit, b.capture],
    });
    let changes = 0;
    let lastCommit: string | null = null;
    let inMarker = false;
    let pending: unknown[][] = [];
    // The next FETCH runs on the server while this one is decoded (one ahead, never more).
    type Fetched = pg.QueryArrayResult<[string, Buffer]>;
    const fetch = (): Promise<Fetched> =>
      client.query<[string, Buffer]>({ text: `FETCH FORWARD ${FETCH} FROM ${CURSOR}`, rowMode: 'array' });
    let ahead: Promise<Fetched> | null = fetch();
    outer: while (ahead) {
      const r: Fetched = await ahead;
      ahead = r.rows.length < FETCH ? null : fetch();
      ahead?.catch(() => {});
      for (const [lsn, data] of r.rows) {
        const d = decoder.decode(lsn, data);
        if (d.kind === 'rows') {
          pending.push(...d.rows);
          changes += d.rows.length;
          if (pending.length >= FETCH) {
            yield pending;
            pending = [];
          }
        } else if (d.kind === 'shape') {
          await b.onShape?.(d.table);
        } else if (d.kind === 'marker') {
          inMarker = b.marker !== null && d.content === b.marker;
        } else if (d.kind === 'commit') {
          lastCommit = d.endLsn;
          if (inMarker) break outer;
          if (!b.replay && (changes >= b.maxChanges || b.timeUp())) break outer;
        }
      }
    }
    // Stopped early: the FETCH in flight must end before the next statement.
    await ahead?.catch(() => {});
    if (pending.length > 0) yield pending;
    await client.query('COMMIT');
    // A replay reads exactly to `upto`. Otherwise the position is the end of the last
    // transaction decoded: the start marker's when the read got there (on a quiet database
    // that moves the position over everything else the server wrote), else the last one
    // handed on. Never a position merely read from the server: a commit not yet flushed
    // before it would be skipped.
    const reached = b.replay ? b.upto : (lastCommit ?? b.from);
    position = compareLsn(reached, b.from) > 0 ? reached : b.from;
  }
  return { batches: batches(), position: () => position };
}
