import type { Column, NativeRows, StepContext } from '@sluice/engine';
import type pg from 'pg';
import { deferred, NotConsumedError } from '../payloads/streams';
import { cursorIndex, cursorTracker } from '../relational/cursor';
import { quoteIdent } from '../relational/identifiers';
import { sourceQuery } from '../relational/pipeline';
import type { CompiledStatement } from '../relational/placeholders';
import { builtInCasts, PREPARED_CASTS_SQL } from './cast-names';
import { CopyBinaryMax, type ScannedKind } from './copy-binary-max';
import { CopyFramesOut } from './copy-frames-out';
import { CopyOutStream } from './copy-out-stream';
import type { PgSession } from './session';
import { LIFT_SQL, RESTORE_SQL } from './statement-limit';
import { type Statement, statementsAtOnce } from './statements-at-once';

// The PostgreSQL source's native form: `COPY (query) TO STDOUT` on the source's own session
// and snapshot (REPEATABLE READ, begun before the cursor was declared), offered beside the
// batches for a PostgreSQL sink to pass through untouched. COPY takes no bound parameters, so
// the query's templates go into its text as literals cast to the very types PostgreSQL infers
// for them as parameters (told at the source's open, else asked with PREPARE). With a
// cursor_column, the next cursor is the greatest value of the column: read from the binary
// stream as it passes (copy-binary-max.ts, inside the server's CopyData messages when they are
// forwarded as they are), or, for a text COPY, the column's max() over the same query in the
// same snapshot. Either way
// PostgreSQL prints the value and it goes through the same tracker as the batches' values; only
// types whose SQL order is the tracker's order qualify.

/**
 * The cursor column types this path takes (smallint, integer, bigint, date, timestamp,
 * timestamptz, numeric): how their binary values compare, and their SQL names.
 */
const CURSOR_TYPES = new Map<number, { kind: ScannedKind; cast: string }>([
  [21, { kind: 'integer', cast: 'int2' }],
  [23, { kind: 'integer', cast: 'int4' }],
  [20, { kind: 'integer', cast: 'int8' }],
  [1082, { kind: 'integer', cast: 'date' }],
  [1114, { kind: 'integer', cast: 'timestamp' }],
  [1184, { kind: 'integer', cast: 'timestamptz' }],
  [1700, { kind: 'numeric', cast: 'numeric' }],
]);
const PREPARED = 'sluice_copy_source';

/**
 * The query as a subquery: its closing `;` (and comments after it) dropped, a line break
 * before the parenthesis that closes it (a trailing `-- comment` must not swallow it).
 */
const nested = (text: string) => `(${text.replace(/;(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*$/, '')}\n)`;

/**
 * The query's text with every parameter written in as a literal cast to the type PostgreSQL gave
 * that parameter (cast-names.ts), as a subquery; `saved` is the session's statement_timeout when
 * it was lifted here, else null: the limit is then lifted by a SELECT in the COPY's own message
 * (leading-select.ts), no round trip of its own. The types come from the source's open, which
 * asked for them in its own round trip (`declared`); when one is not built in, the query is
 * prepared, the parameters' types read and the limit lifted in one statement, and the prepared
 * statement deallocated, all in one message (statements-at-once.ts): one round trip.
 */
async function inlineAndLift(
  session: PgSession,
  step: StepContext,
  query: CompiledStatement,
  declared: readonly number[] | null,
): Promise<{ text: string; saved: string | null }> {
  const { client, timed } = session;
  if (query.values.length === 0) return { text: nested(query.text), saved: null };
  const inlined = (types: readonly string[]) => {
    const literals = query.values.map((v, i) =>
      v === null ? `NULL::${types[i]}` : `${client.escapeLiteral(String(v))}::${types[i]}`,
    );
    return nested(sourceQuery(step, 'postgres', (i) => `(${literals[i]})`).text);
  };
  const known = declared && declared.length === query.values.length ? builtInCasts(declared) : null;
  if (known) return { text: inlined(known), saved: null };
  const r = await timed(
    statementsAtOnce(
      client,
      [{ text: `PREPARE ${PREPARED} AS ${query.text}` }],
      { text: `${LIFT_SQL}, ${PREPARED_CASTS_SQL}`, values: [PREPARED] },
      [{ text: `DEALLOCATE ${PREPARED}` }],
    ),
  );
  const [saved, , types] = r.rows[0] as [string, string, string[]];
  return { text: inlined(types), saved };
}

export type PgNative = { rows: NativeRows; used(): boolean; nextCursor(): Promise<string | null> };

/** The native form of a source, or null when its cursor column cannot be carried over. */
export function pgNativeRows(
  session: PgSession,
  step: StepContext,
  query: CompiledStatement,
  fields: pg.FieldDef[],
  columns: Column[],
  /** The types the server gave the query's parameters at the source's open, if it told them. */
  declared: readonly number[] | null = null,
): PgNative | null {
  const index = cursorIndex(step, columns);
  if (index !== null && !CURSOR_TYPES.has(fields[index].dataTypeID)) return null;
  const done = deferred<string | null>();
  let opened = false;
  let rows = 0;
  const { client, timed } = session;

  const scannedOf = (format: 'binary' | 'text') =>
    index === null || format !== 'binary' ? undefined : CURSOR_TYPES.get(fields[index].dataTypeID);

  async function* chunks(format: 'binary' | 'text', framed: boolean): AsyncGenerator<Uint8Array> {
    let finished = false;
    try {
      // One statement carries every row: the sink bounds the time between chunks instead.
      const inlined = await inlineAndLift(session, step, query, declared);
      const { text } = inlined;
      // The limit not lifted yet is lifted in the COPY's message, ahead of it.
      const lead = inlined.saved === null ? LIFT_SQL : undefined;
      const statement = `COPY ${text} TO STDOUT (FORMAT ${format})`;
      const scanned = scannedOf(format);
      const scan = scanned && index !== null ? new CopyBinaryMax(index, scanned.kind) : null;
      let saved = inlined.saved;
      if (framed) {
        // The server's CopyData messages as they are (copy-frames-out.ts), for the sink's socket;
        // the cursor column's values are read inside them where they lie.
        const copy = client.query(new CopyFramesOut(statement, lead));
        for await (const chunk of copy) {
          scan?.pushFramed(chunk);
          yield chunk;
        }
        rows = copy.rowCount;
        saved ??= copy.leading;
      } else {
        const copy = client.query(new CopyOutStream(statement, lead));
        for await (const chunk of copy) {
          scan?.push(chunk as Uint8Array);
          yield chunk as Uint8Array;
        }
        rows = copy.rowCount;
        saved ??= copy.leading;
      }
      if (index === null) {
        // Every row is out and no cursor is read after them: the consumer's read ends here, and
        // the read-only snapshot ends beside the consumer's own end (its COMMIT), not before it.
        finished = true;
        void endSnapshot();
        return;
      }
      // The cursor's statement runs under the limit again (without it, COMMIT ends the
      // transaction and the local setting with it), then COMMIT: one round trip. With a cursor
      // the consumer waits for it: a failure here must still reach the sink before it commits,
      // or the rows would be committed without the cursor that follows them.
      let last: Statement;
      if (scan && !scan.failed && scan.complete) {
        // The binary value goes back as a binary parameter: PostgreSQL prints it as max() would.
        const bytes = scan.max();
        last =
          bytes === null ? { text: 'SELECT NULL' } : { text: `SELECT $1::${scanned!.cast}`, values: [bytes] };
      } else {
        last = { text: `SELECT max(q.${quoteIdent(columns[index].name, 'postgres')}) FROM ${text} q` };
      }
      // The COPY ran, so the lift before it answered (the server runs neither when it fails).
      if (saved === null) throw new Error('the statement limit lifted for the copy left no value to restore');
      const restore = { text: RESTORE_SQL, values: [saved] };
      const answer = await timed(statementsAtOnce(client, [restore], last, [{ text: 'COMMIT' }]));
      const greatest = answer.rows[0][0];
      const tracker = cursorTracker(step, columns)!;
      const row: unknown[] = columns.map(() => null);
      row[index] = greatest;
      tracker.observe([row]);
      finished = true;
      done.resolve(tracker.value());
      await session.close();
    } catch (err) {
      finished = true;
      const mapped = session.error(err, query.values);
      done.reject(mapped);
      await session.close();
      throw mapped;
    } finally {
      if (!finished) {
        done.reject(new NotConsumedError());
        await session.close();
      }
    }
  }

  /**
   * COMMIT of a read whose rows are all out, then the session back. The rows came from one
   * snapshot and nothing is read after them, so a failure here changes no result: the session is
   * then not reused (run-session.ts keeps only a session that is idle). The source step ends once
   * this settles.
   */
  async function endSnapshot(): Promise<void> {
    await timed(client.query('COMMIT')).catch(() => {});
    done.resolve(null);
    await session.close().catch(() => {});
  }

  return {
    rows: {
      format: 'postgres-copy',
      types: fields.map((f, i) => ({ oid: f.dataTypeID, name: columns[i].type })),
      open(format, opts) {
        if (opened) throw new Error('a payload stream can be read only once');
        opened = true;
        // The cursor column's greatest value is read from the rows as they pass, framed or not.
        const framed = opts?.framed === true;
        return { chunks: chunks(format, framed), rows: () => rows, framed };
      },
    },
    used: () => opened,
    nextCursor: () => done.promise,
  };
}
