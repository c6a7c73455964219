import type { Column, NativeRows, SourceOutput, StepContext } from '@sluice/engine';
import { deferred, tracked } from '../payloads/streams';
import { ConnectorError } from '../types';
import { utcDatetime } from './datetime';

// The incremental cursor of a SQL source (PostgreSQL, MySQL, Snowflake, BigQuery): with
// `cursor_column`, the greatest value of that column among the rows read becomes the step's
// next cursor (committed only when the whole run succeeds, like an HTTP source's). The query decides what it reads after the committed cursor
// through `{{runtime.incremental.lower_bound.cursor}}`; the order of its rows does not matter.

const NUMERIC = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

type Key = { kind: 'number'; n: number; big: bigint | null } | { kind: 'text'; t: string };

function keyOf(v: unknown): Key | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return { kind: 'number', n: Number(v), big: v };
  if (typeof v === 'number') return Number.isFinite(v) ? { kind: 'number', n: v, big: null } : null;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : { kind: 'text', t: v.toISOString() };
  const text = Buffer.isBuffer(v) ? v.toString('hex') : String(v);
  if (NUMERIC.test(text)) {
    const big = /^-?\d+$/.test(text) ? BigInt(text) : null;
    return { kind: 'number', n: Number(text), big };
  }
  // Zoned timestamps compare as instants (a session's offset may change with daylight saving).
  return { kind: 'text', t: utcDatetime(text) };
}

function greater(a: Key, b: Key): boolean {
  if (a.kind === 'number' && b.kind === 'number') {
    if (a.big !== null && b.big !== null) return a.big > b.big;
    return a.n > b.n;
  }
  if (a.kind === 'text' && b.kind === 'text') return a.t > b.t;
  return a.kind === 'text'; // mixed kinds: text sorts after numbers, as in most collations
}

const textOf = (v: unknown) =>
  v instanceof Date ? v.toISOString() : Buffer.isBuffer(v) ? v.toString('hex') : String(v);

export type CursorTracker = {
  /** Passes the batch through, noting its greatest cursor value. */
  observe(batch: unknown[][]): unknown[][];
  /** The next cursor as text; `null` (keep the committed one) when no row had a value. */
  value(): string | null;
};

/** The index of the step's `cursor_column` among the result's columns, or `null` without one. */
export function cursorIndex(step: StepContext, columns: Column[]): number | null {
  const op = step.step.operation;
  const name = op.operation_type === 'sql' ? op.cursor_column : undefined;
  if (name === undefined) return null;
  // Exactly as named, else the one column that matches without regard to case (Snowflake
  // answers unquoted names in upper case).
  let index = columns.findIndex((c) => c.name === name);
  if (index < 0) {
    const folded = columns.flatMap((c, i) => (c.name.toLowerCase() === name.toLowerCase() ? [i] : []));
    if (folded.length === 1) index = folded[0];
  }
  if (index < 0) {
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `cursor_column ${JSON.stringify(name)} is not a column of the query's result`,
    );
  }
  return index;
}

/** A tracker for the step's `cursor_column` among the result's columns, or `null` without one. */
export function cursorTracker(step: StepContext, columns: Column[]): CursorTracker | null {
  const index = cursorIndex(step, columns);
  if (index === null) return null;
  let best: { key: Key; raw: unknown } | null = null;
  return {
    observe(batch) {
      for (const row of batch) {
        const raw = row[index];
        const key = keyOf(raw);
        if (key !== null && (best === null || greater(key, best.key))) best = { key, raw };
      }
      return batch;
    },
    value: () => (best === null ? null : textOf(best.raw)),
  };
}

/**
 * A SQL source's output: its rows (and their native form, when the source offers one), with the cursor (when the step has one) taken from every
 * batch on the way and resolved once the rows have been read to the end.
 */
export function rowsOutput(
  columns: Column[],
  batches: AsyncIterable<unknown[][]>,
  cursor: CursorTracker | null,
  native?: { rows: NativeRows; used(): boolean; nextCursor(): Promise<string | null> },
): SourceOutput {
  async function* observed(): AsyncGenerator<unknown[][]> {
    for await (const batch of batches) yield cursor ? cursor.observe(batch) : batch;
  }
  const ended = deferred<string | null>();
  return {
    payload: {
      kind: 'rows',
      columns,
      batches: tracked(observed(), () => ended.resolve(cursor?.value() ?? null), ended.reject),
      ...(native ? { native: native.rows } : {}),
    },
    // The native form, when the consumer took it, reports its own cursor.
    nextCursor: () => (native?.used() ? native.nextCursor() : ended.promise),
  };
}
