import { eq, sql } from 'drizzle-orm';
import { type Deps, systemActor } from '../../context';
import type { Tx } from '../../db/client';
import { environments, pipelines } from '../../db/schema/index';
import { randomSlug } from '../../http/fields';
import { alertTriggerFailed, resolveTriggerFailed } from '../notifications/index';
import { type Planned, plan, type ScheduleSpec } from './schedule-calc';
import { startTriggeredRun } from './trigger-runs';
import * as repo from './triggers.repo';

// The schedule tick. Every API host and worker runs it; each due trigger is claimed with
// FOR UPDATE SKIP LOCKED and decided in one transaction: ledger rows, runs and jobs commit
// together or not at all, so a crash or a second host never double-fires or half-fires.

/** Due nominal times decided per trigger per transaction; a longer backlog continues next round. */
export const MAX_DUE_PER_ROUND = 500;
/** Catch-up policy skip still starts an occurrence this late (normal tick delay, not downtime). */
export const ON_TIME_GRACE_MS = 60_000;

export type Clock = () => Date;
export type TickResult = { triggers: number; started: number; recorded: number };

export function scheduleOf(t: repo.TriggerRow): ScheduleSpec {
  return {
    cron: t.cron ?? '',
    timeZone: t.timeZone ?? 'UTC',
    jitterSeconds: t.jitterSeconds ?? 0,
    startAt: t.startAt,
    endAt: t.endAt,
  };
}

/** The first fire time after the cursor, or null when the schedule has ended. */
export function nextFireAfter(t: repo.TriggerRow, cursor: Date): Date | null {
  return plan(scheduleOf(t), t.id, cursor, 1)[0]?.fireAt ?? null;
}

async function dbNow(deps: Deps): Promise<Date> {
  const res: any = await deps.db.execute(sql`select now() as now`);
  const row = (res.rows ?? res)[0];
  return new Date(row.now);
}

/**
 * One tick: decides every due trigger. `clock` replaces the database clock (tests drive it);
 * without it every decision uses the database's now(), never a host clock.
 */
export async function tick(deps: Deps, opts: { clock?: Clock; limit?: number } = {}): Promise<TickResult> {
  const now = opts.clock ? opts.clock() : await dbNow(deps);
  const seen: string[] = [];
  const total: TickResult = { triggers: 0, started: 0, recorded: 0 };
  for (let i = 0; i < (opts.limit ?? 1000); i++) {
    const r = await deps.db.transaction(async (tx) => {
      const t = await repo.claimDueTrigger(tx, now, seen);
      if (!t) return null;
      seen.push(t.id);
      return decideTrigger(tx, deps, t, now);
    });
    if (!r) break;
    total.triggers++;
    total.started += r.started;
    total.recorded += r.recorded;
  }
  return total;
}

type Decision = { outcome: string; reason: string | null };

/** Everything that happens to one claimed trigger, inside the caller's transaction. */
export async function decideTrigger(tx: Tx, deps: Deps, t: repo.TriggerRow, now: Date) {
  const [names] = await tx
    .select({ pipelineSlug: pipelines.slug, environmentSlug: environments.slug })
    .from(pipelines)
    .innerJoin(environments, eq(environments.id, t.environmentId))
    .where(eq(pipelines.id, t.pipelineId));
  const result = { started: 0, recorded: 0, more: false };
  let buffered = t.bufferedNominalAt;

  const start = async (p: Planned) => {
    const r = await startTriggeredRun(tx, deps, {
      trigger: t,
      kind: 'schedule',
      key: p.nominalAt.toISOString(),
      input: {},
      actor: systemActor,
      requestId: null,
      pipelineSlug: names.pipelineSlug,
      environmentSlug: names.environmentSlug,
      metadata: { nominal_at: p.nominalAt.toISOString() },
    });
    if (r.ok) {
      result.started++;
      await resolveTriggerFailed(tx, deps, t);
    } else if (r.code !== 'DUPLICATE') {
      await alertTriggerFailed(tx, deps, t, {
        severity: 'error',
        reason: `The scheduled occurrence of ${p.nominalAt.toISOString()} did not start: ${r.reason}`,
        sourceKey: `trigger:${t.id}:${p.nominalAt.toISOString()}`,
      });
    }
    return r;
  };

  // A buffered occurrence starts once the run it waited for has finished.
  if (buffered && !t.paused && !(await repo.activeRun(tx, t.id))) {
    const p = { nominalAt: buffered, fireAt: now };
    const r = await start(p);
    await repo.updateOccurrence(tx, t.id, buffered, {
      outcome: r.ok ? 'started' : 'failed',
      reason: r.ok ? `started after the previous run finished` : r.reason,
      runId: r.ok ? r.run.id : null,
      fireAt: now,
    });
    buffered = null;
  }

  const cursor = t.cursorNominalAt ?? now;
  const upcoming = plan(scheduleOf(t), t.id, cursor, MAX_DUE_PER_ROUND + 1);
  const due = upcoming.filter((p) => p.fireAt <= now).slice(0, MAX_DUE_PER_ROUND);
  const backlogContinues =
    due.length === MAX_DUE_PER_ROUND && (upcoming[MAX_DUE_PER_ROUND]?.fireAt ?? now) <= now;

  const decisions = new Map<number, Decision>();
  const windowStart = now.getTime() - (t.catchUpWindowSeconds ?? 86400) * 1000;
  const candidates: Planned[] = [];
  for (const p of due) {
    if (t.paused) {
      decisions.set(p.nominalAt.getTime(), {
        outcome: 'skipped_paused',
        reason: t.pauseNote ? `the trigger was paused: ${t.pauseNote}` : 'the trigger was paused',
      });
    } else if (p.nominalAt.getTime() < windowStart) {
      decisions.set(p.nominalAt.getTime(), {
        outcome: 'skipped_catch_up',
        reason: `missed by more than the catch-up window (${t.catchUpWindowSeconds} s)`,
      });
    } else candidates.push(p);
  }

  // Catch-up: which of the missed-but-recent occurrences still start.
  const policy = t.catchUpPolicy ?? 'latest';
  let toStart: Planned[] = [];
  for (const [i, p] of candidates.entries()) {
    const late = p.fireAt.getTime() < now.getTime() - ON_TIME_GRACE_MS;
    const isLast = i === candidates.length - 1 && !backlogContinues;
    if (policy === 'skip' && late) {
      decisions.set(p.nominalAt.getTime(), {
        outcome: 'skipped_catch_up',
        reason: 'missed while no scheduler ran (catch-up policy skip)',
      });
    } else if (policy === 'latest' && !isLast) {
      decisions.set(p.nominalAt.getTime(), {
        outcome: 'skipped_catch_up',
        reason: 'superseded by a later occurrence (catch-up policy latest)',
      });
    } else toStart.push(p);
  }
  if (policy === 'all' && toStart.length > (t.catchUpMaxRuns ?? 10)) {
    const cap = t.catchUpMaxRuns ?? 10;
    for (const p of toStart.slice(0, toStart.length - cap)) {
      decisions.set(p.nominalAt.getTime(), {
        outcome: 'skipped_catch_up',
        reason: `more than max_runs (${cap}) missed occurrences; the newest ${cap} start`,
      });
    }
    toStart = toStart.slice(toStart.length - cap);
  }

  for (const p of due) {
    const key = p.nominalAt.getTime();
    let d = decisions.get(key);
    let runId: string | null = null;
    if (!d) {
      const active = t.overlap === 'allow' ? null : await repo.activeRun(tx, t.id);
      if (!active) {
        const r = await start(p);
        if (r.ok) {
          d = { outcome: 'started', reason: null };
          runId = r.run.id;
        } else if (r.code === 'DUPLICATE') continue;
        else d = { outcome: 'failed', reason: r.reason };
      } else if (t.overlap === 'buffer_one' && !buffered) {
        d = { outcome: 'buffered', reason: `waiting for run ${active.slug} (${active.state}) to finish` };
        buffered = p.nominalAt;
      } else {
        d = {
          outcome: 'skipped_overlap',
          reason:
            t.overlap === 'buffer_one'
              ? `run ${active.slug} is still ${active.state} and the buffer already holds ${buffered!.toISOString()}`
              : `run ${active.slug} is still ${active.state} (overlap skip)`,
        };
      }
    }
    const inserted = await repo.insertOccurrence(tx, {
      triggerId: t.id,
      nominalAt: p.nominalAt,
      fireAt: d.outcome === 'started' || d.outcome === 'failed' ? now : p.fireAt,
      outcome: d.outcome,
      reason: d.reason,
      runId,
      slug: randomSlug('occ', 16),
    });
    if (inserted) result.recorded++;
  }

  result.more = backlogContinues;
  const newCursor = due.length ? due[due.length - 1].nominalAt : cursor;
  await repo.updateTrigger(tx, t.id, {
    cursorNominalAt: newCursor,
    nextFireAt: nextFireAfter(t, newCursor),
    bufferedNominalAt: buffered,
  });
  return result;
}
