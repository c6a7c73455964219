import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { LOG_BATCH_LINES } from '../../db/schema/index';
import { type ListQuery, paginate } from '../../http/pagination';

// Reading a run's log (GET …/runs/{run_slug}/logs and the app's live tail): its lines, stored in
// batches (docs/operations.md#run-logs; written by run-progress.repo.ts), unpacked a page at a time.

// Log lines are addressed by their number within the run; zero-padded so the text cursor orders
// like the number.
const lineSeq = sql`(b.seq + e.n - 1)::int`;
const paddedSeq = sql`lpad(${lineSeq}::text, 10, '0')`;

/** The cursor of the log line with this number, to read the lines after it (a live tail resumes so). */
export const logCursorAfter = (seq: number) => {
  const padded = String(seq).padStart(10, '0');
  return `${Buffer.from(padded).toString('base64url')}_${padded}`;
};

export type LogRow = { seq: number; stepSlug: string | null; level: string; message: string; at: Date };

/**
 * The run's log lines. They are stored in batches of up to LOG_BATCH_LINES consecutive lines
 * (docs/operations.md#run-logs), partitioned by the batch's time
 * (docs/operations.md#history-partitions): the bounds from the run's start and, once it has
 * ended, to its end (a day of slack each for worker clocks) leave the other partitions unread, so
 * an old run's log costs what a new one's does. A run executed again has no end until it ends
 * again, so its new lines are never cut off. A page walks `pipeline_run_logs_pkey` from the
 * cursor's batch and unpacks batches in order until the page is full: the last 20 lines of a run
 * of a million read one or two batches, not a million lines sorted. Reading forward from a line,
 * the batch holding the next one starts at most LOG_BATCH_LINES − 1 lines before it, which bounds
 * the walk's start.
 */
export async function listLogs(
  db: DbOrTx,
  run: { id: string; createdAt: Date; finishedAt: Date | null },
  query: ListQuery,
) {
  const since = new Date(run.createdAt.getTime() - 86_400_000).toISOString();
  const until = run.finishedAt
    ? sql`and b.at < ${new Date(run.finishedAt.getTime() + 86_400_000).toISOString()}::timestamptz`
    : sql``;
  return paginate<LogRow>({
    query,
    sorts: { log_seq: { column: paddedSeq, kind: 'text' } },
    tiebreak: paddedSeq,
    // The cursor's value and identifier are both the padded number (`keyOf`).
    idShape: /^\d{10}$/,
    fetch: async ({ cursor, ascending, limit }) => {
      const after = cursor ? Number(cursor.id) : undefined;
      const from =
        after === undefined
          ? sql``
          : ascending
            ? sql`and b.seq > ${after - LOG_BATCH_LINES}::int and b.last_seq > ${after}::int and ${lineSeq} > ${after}::int`
            : sql`and b.seq < ${after}::int and ${lineSeq} < ${after}::int`;
      const dir = ascending ? sql.raw('asc') : sql.raw('desc');
      const res: any = await db.execute(sql`
        select ${lineSeq} as seq, e.v->>0 as step_slug, e.v->>1 as level, e.v->>2 as message,
               (extract(epoch from b.at) * 1000)::bigint + (e.v->>3)::bigint as at_ms
          from pipeline_run_logs b
          cross join lateral jsonb_array_elements(b.lines) with ordinality as e(v, n)
         where b.run_id = ${run.id}::uuid and b.at >= ${since}::timestamptz ${until} ${from}
         order by b.seq ${dir}, e.n ${dir}
         limit ${limit}`);
      return ((res.rows ?? res) as any[]).map((r) => ({
        seq: Number(r.seq),
        stepSlug: r.step_slug,
        level: r.level,
        message: r.message,
        at: new Date(Number(r.at_ms)),
      }));
    },
    keyOf: (r) => ({ value: String(r.seq).padStart(10, '0'), id: String(r.seq).padStart(10, '0') }),
  });
}
