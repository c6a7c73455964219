import { createHash } from 'node:crypto';
import { Cron } from 'croner';

// The schedule calculator. croner (pinned) is used only to enumerate nominal times; it never
// runs a timer (`paused: true`, no callback). Everything else (cursor, jitter, catch-up,
// overlap) is ours and deterministic, so every host computes the same answer.
//
// DST (croner's rules, as Vixie cron): a fixed-time schedule (single minute and hour) whose
// time falls in a spring gap fires at the first valid instant after it; a repeated time fires
// once, at its first copy. An interval schedule skips times that do not exist and fires both
// copies of a repeated time.

export type ScheduleSpec = {
  cron: string;
  timeZone: string;
  jitterSeconds: number;
  startAt: Date | null;
  endAt: Date | null;
};

export const MAX_JITTER_SECONDS = 900;

export class ScheduleError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function cronOf(cron: string, timeZone: string): Cron {
  if (!isTimeZone(timeZone)) throw new ScheduleError('time_zone', `${timeZone} is not an IANA time zone`);
  if (cron.trim().split(/\s+/).length !== 5) {
    throw new ScheduleError(
      'cron',
      'cron must have exactly 5 fields: minute hour day-of-month month day-of-week',
    );
  }
  try {
    return new Cron(cron, { timezone: timeZone, mode: '5-part', paused: true });
  } catch (err) {
    throw new ScheduleError(
      'cron',
      `cron is not valid: ${(err as Error).message.replace(/^CronPattern: /, '')}`,
    );
  }
}

/** Throws ScheduleError when the cron or the zone is unusable, or the schedule never fires. */
export function checkSchedule(s: ScheduleSpec, from: Date): void {
  const c = cronOf(s.cron, s.timeZone);
  if (s.startAt && s.endAt && s.endAt <= s.startAt)
    throw new ScheduleError('end_at', 'end_at must be after start_at');
  if (!c.nextRun(from)) throw new ScheduleError('cron', 'cron never matches a future time');
}

/** Nominal times strictly after `after`, within start/end, at most `n`. */
export function nominalsAfter(s: ScheduleSpec, after: Date, n: number): Date[] {
  const c = cronOf(s.cron, s.timeZone);
  let from = after;
  if (s.startAt && s.startAt.getTime() - 1 > from.getTime()) from = new Date(s.startAt.getTime() - 1);
  const out: Date[] = [];
  while (out.length < n) {
    const next = c.nextRun(from);
    if (!next || (s.endAt && next >= s.endAt)) break;
    out.push(next);
    from = next;
  }
  return out;
}

/** The newest nominal time at or before `at` (and after `after`), or null. */
export function latestNominalAtOrBefore(s: ScheduleSpec, after: Date, at: Date): Date | null {
  const c = cronOf(s.cron, s.timeZone);
  const [prev] = c.previousRuns(1, new Date(at.getTime() + 1));
  if (!prev || prev <= after) return null;
  if (s.startAt && prev < s.startAt) return null;
  if (s.endAt && prev >= s.endAt) return null;
  return prev;
}

/**
 * Deterministic jitter: a hash of the trigger and the nominal time, in whole seconds, below both
 * `jitterSeconds` and the gap to the next nominal time, so fire times keep their order.
 */
export function jitterMs(seed: string, nominal: Date, jitterSeconds: number, next: Date | null): number {
  if (jitterSeconds <= 0) return 0;
  let cap = jitterSeconds;
  if (next) cap = Math.min(cap, Math.floor((next.getTime() - nominal.getTime()) / 1000) - 1);
  if (cap <= 0) return 0;
  const h = createHash('sha256').update(`${seed}|${nominal.toISOString()}`).digest();
  return (h.readUInt32BE(0) % (cap + 1)) * 1000;
}

export type Planned = { nominalAt: Date; fireAt: Date };

/** Nominal times after `after` with their fire times (nominal + jitter), at most `n`. */
export function plan(s: ScheduleSpec, seed: string, after: Date, n: number): Planned[] {
  const nominals = nominalsAfter(s, after, n + 1);
  return nominals.slice(0, n).map((nominalAt, i) => ({
    nominalAt,
    fireAt: new Date(
      nominalAt.getTime() + jitterMs(seed, nominalAt, s.jitterSeconds, nominals[i + 1] ?? null),
    ),
  }));
}

// ---- local time and DST flags -------------------------------------------------------------

const partsFormat = new Map<string, Intl.DateTimeFormat>();
function wall(d: Date, tz: string) {
  let f = partsFormat.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    partsFormat.set(tz, f);
  }
  const p = Object.fromEntries(f.formatToParts(d).map((x) => [x.type, x.value]));
  return { y: +p.year, mo: +p.month, d: +p.day, h: +p.hour, mi: +p.minute, s: +p.second };
}

/** UTC offset of `tz` at `d`, in minutes. */
export function offsetMinutes(d: Date, tz: string): number {
  const w = wall(d, tz);
  const asUtc = Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s);
  return Math.round((asUtc - Math.floor(d.getTime() / 1000) * 1000) / 60000);
}

const pad = (n: number, l = 2) => String(Math.abs(n)).padStart(l, '0');

/** ISO 8601 local time with offset, e.g. 2026-03-08T03:00:00-04:00. */
export function localIso(d: Date, tz: string): string {
  const w = wall(d, tz);
  const off = offsetMinutes(d, tz);
  const sign = off < 0 ? '-' : '+';
  return `${w.y}-${pad(w.mo)}-${pad(w.d)}T${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}${sign}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

export type DstFlag = 'none' | 'gap_shifted' | 'repeated';

/**
 * `gap_shifted`: the cron names a wall time that did not exist that day and the occurrence was
 * moved to the end of the gap. `repeated`: the wall time exists twice that day (fall-back).
 */
export function dstFlag(cron: string, tz: string, nominal: Date): DstFlag {
  const before = offsetMinutes(new Date(nominal.getTime() - 6 * 3600_000), tz);
  const after = offsetMinutes(new Date(nominal.getTime() + 6 * 3600_000), tz);
  if (before === after) return 'none';
  const w = wall(nominal, tz);
  const [minF, hourF] = cron.trim().split(/\s+/);
  if (/^\d+$/.test(minF) && /^\d+$/.test(hourF) && (+minF !== w.mi || +hourF !== w.h)) return 'gap_shifted';
  const delta = Math.abs(after - before) * 60000;
  for (const other of [nominal.getTime() - delta, nominal.getTime() + delta]) {
    const o = wall(new Date(other), tz);
    if (o.y === w.y && o.mo === w.mo && o.d === w.d && o.h === w.h && o.mi === w.mi) return 'repeated';
  }
  return 'none';
}

export type PreviewItem = {
  nominal_at: string;
  fire_at: string;
  local_time: string;
  dst: DstFlag;
};

export function preview(s: ScheduleSpec, seed: string, after: Date, n: number): PreviewItem[] {
  return plan(s, seed, after, n).map((p) => ({
    nominal_at: p.nominalAt.toISOString(),
    fire_at: p.fireAt.toISOString(),
    local_time: localIso(p.nominalAt, s.timeZone),
    dst: dstFlag(s.cron, s.timeZone, p.nominalAt),
  }));
}

/** Time-zone rules version of this Node build: zone rules change with Node upgrades. */
export const tzVersion = (): string => process.versions.tz ?? 'unknown';
