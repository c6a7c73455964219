import { sql } from 'drizzle-orm';
import type { Db } from './client';

// The history tables are range-partitioned by time (docs/operations.md#history-partitions):
// partitions are created ahead by the hourly retention step, rows that fall outside every
// partition land in `<table>_default`, and retention drops a whole partition once all of it is
// older than the retention window instead of deleting its rows.

export type Period = 'week' | 'month';
export type HistoryTable = {
  table: 'events' | 'pipeline_run_logs';
  /** The partition key column. */
  column: string;
  period: Period;
  /** Periods created beyond the current one. */
  ahead: number;
};

// One period ahead: the hourly step keeps it so, and every partition is one more index probe for
// a list that does not bound the time (the first page of events reads each one).
export const eventsHistory: HistoryTable = {
  table: 'events',
  column: 'occurred_at',
  period: 'week',
  ahead: 1,
};
export const runLogsHistory: HistoryTable = {
  table: 'pipeline_run_logs',
  column: 'at',
  period: 'month',
  ahead: 1,
};

/** The UTC start of the period holding `d` (weeks start on Monday, as date_trunc('week')). */
export function periodStart(d: Date, period: Period): Date {
  if (period === 'month') return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const day = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  return new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * 86_400_000);
}

export function addPeriods(d: Date, period: Period, n: number): Date {
  if (period === 'month') return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, d.getUTCDate()));
  return new Date(d.getTime() + n * 7 * 86_400_000);
}

/** `<table>_p<YYYYMMDD of its first day>`, as migration 0017 names them. */
export const partitionName = (table: string, start: Date) =>
  `${table}_p${start.toISOString().slice(0, 10).replaceAll('-', '')}`;

export type Partition = { name: string; from: Date; to: Date };

/** The ranged partitions of a table (the default partition is not listed), oldest first. */
export async function listPartitions(db: Db, table: HistoryTable['table']): Promise<Partition[]> {
  const res: any = await db.execute(sql`
    select c.relname as name,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz as "from",
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz as "to"
      from pg_inherits i
      join pg_class c on c.oid = i.inhrelid
      join pg_class p on p.oid = i.inhparent
      join pg_namespace n on n.oid = p.relnamespace
     where p.relname = ${table} and n.nspname = current_schema()
       and pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'
     order by 2`);
  return ((res.rows ?? res) as { name: string; from: Date | string; to: Date | string }[]).map((r) => ({
    name: r.name,
    from: new Date(r.from),
    to: new Date(r.to),
  }));
}

const literal = (d: Date) => `'${d.toISOString()}'`;

/**
 * Creates the partitions from the period holding `now` to `ahead` periods beyond it that do not
 * exist yet. Rows already in the default partition for such a range (a clock far ahead) are
 * moved into the new partition in the same transaction, since a range cannot be attached while
 * the default partition holds rows of it. Returns the names created.
 */
export async function ensurePartitions(db: Db, h: HistoryTable, now: Date): Promise<string[]> {
  const have = new Set((await listPartitions(db, h.table)).map((p) => p.from.getTime()));
  const created: string[] = [];
  const first = periodStart(now, h.period);
  for (let i = 0; i <= h.ahead; i++) {
    const from = addPeriods(first, h.period, i);
    if (have.has(from.getTime())) continue;
    const to = addPeriods(first, h.period, i + 1);
    const name = partitionName(h.table, from);
    const range = `${h.column} >= ${literal(from)} and ${h.column} < ${literal(to)}`;
    await db.transaction(async (tx) => {
      await tx.execute(
        sql.raw(`create table "${name}" (like "${h.table}" including defaults including constraints)`),
      );
      await tx.execute(
        sql.raw(`with moved as (delete from "${h.table}_default" where ${range} returning *)
                 insert into "${name}" select * from moved`),
      );
      await tx.execute(
        sql.raw(
          `alter table "${h.table}" attach partition "${name}" for values from (${literal(from)}) to (${literal(to)})`,
        ),
      );
    });
    created.push(name);
  }
  return created;
}

/**
 * Drops the partitions whose whole range ends at or before `cutoff`; rows of the default
 * partition older than it are deleted in bounded batches. Returns the names dropped.
 */
export async function dropPartitionsBefore(db: Db, h: HistoryTable, cutoff: Date): Promise<string[]> {
  const old = (await listPartitions(db, h.table)).filter((p) => p.to.getTime() <= cutoff.getTime());
  for (const p of old) {
    // Detached first so the drop never blocks inserts into the parent for long.
    await db.execute(sql.raw(`alter table "${h.table}" detach partition "${p.name}"`));
    await db.execute(sql.raw(`drop table "${p.name}"`));
  }
  for (let round = 0; round < 200; round++) {
    const res: any = await db.execute(
      sql.raw(`delete from "${h.table}_default" where ctid in (
        select ctid from "${h.table}_default" where ${h.column} < ${literal(cutoff)} limit 5000)`),
    );
    if ((res.affectedRows ?? res.rowCount ?? 0) < 5000) break;
  }
  return old.map((p) => p.name);
}
