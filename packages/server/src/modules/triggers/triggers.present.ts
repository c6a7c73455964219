import type { DbOrTx } from '../../db/client';
import { iso, isoOrNull } from '../../http/fields';
import { plan } from './schedule-calc';
import { scheduleOf } from './trigger-tick';
import * as repo from './triggers.repo';

// Trigger rows → the API resource, with last_occurrence and next_fire_times on every read.

export type TriggerNames = { pipelineSlug: string; environmentSlug: string };

export const deliveryPath = (slug: string) => `/webhooks/pipeline-triggers/${slug}/deliveries/{delivery_id}`;

/** Next 5 fire times after the later of the cursor and `now` (none while paused or disabled). */
export function nextFireTimes(t: repo.TriggerRow, now: Date): string[] {
  if (t.kind !== 'schedule' || !t.enabled || t.paused) return [];
  const from = t.cursorNominalAt && t.cursorNominalAt > now ? t.cursorNominalAt : now;
  const pending =
    t.cursorNominalAt && t.cursorNominalAt < now ? plan(scheduleOf(t), t.id, t.cursorNominalAt, 5) : [];
  // Due but not yet decided occurrences come first: they fire at the next tick.
  const overdue = pending.filter((p) => p.fireAt <= now);
  const later = plan(scheduleOf(t), t.id, from, 5);
  return [...overdue, ...later].slice(0, 5).map((p) => iso(p.fireAt));
}

export async function presentTriggers(
  db: DbOrTx,
  rows: repo.TriggerRow[],
  names: TriggerNames,
  now = new Date(),
) {
  const ids = rows.map((r) => r.id);
  // One after another: `db` may be a transaction, one connection that runs a statement at a time
  // (pg queues the others, and pg 9 refuses them).
  const occ = await repo.latestOccurrences(db, ids);
  const dels = await repo.latestDeliveries(db, ids);
  const secrets = await repo.secretsOf(db, ids);
  return rows.map((t) => {
    const o = occ.get(t.id);
    const d = dels.get(t.id);
    const last = o
      ? {
          nominal_at: iso(o.nominalAt),
          fire_at: iso(o.fireAt),
          outcome: o.outcome as 'started',
          reason: o.reason,
          run_slug: o.runSlug,
        }
      : d
        ? {
            nominal_at: iso(d.receivedAt),
            fire_at: iso(d.receivedAt),
            outcome: 'started' as const,
            reason: null,
            run_slug: d.runSlug,
          }
        : null;
    return {
      slug: t.slug,
      name: t.name,
      kind: t.kind as 'schedule' | 'webhook',
      pipeline_slug: names.pipelineSlug,
      environment_slug: names.environmentSlug,
      enabled: t.enabled,
      paused: t.paused,
      pause_note: t.pauseNote,
      description: t.description,
      schedule:
        t.kind === 'schedule'
          ? {
              cron: t.cron!,
              time_zone: t.timeZone!,
              overlap: t.overlap as 'skip',
              catch_up: {
                policy: t.catchUpPolicy as 'latest',
                window_seconds: t.catchUpWindowSeconds ?? 86400,
                max_runs: t.catchUpMaxRuns ?? 10,
              },
              jitter_seconds: t.jitterSeconds ?? 0,
              start_at: isoOrNull(t.startAt),
              end_at: isoOrNull(t.endAt),
            }
          : null,
      webhook:
        t.kind === 'webhook'
          ? {
              delivery_path: deliveryPath(t.slug),
              secrets: secrets
                .filter((s) => s.triggerId === t.id && (!s.expiresAt || s.expiresAt > now))
                .map((s) => ({
                  id: s.slug,
                  prefix: s.prefix,
                  created_at: iso(s.createdAt),
                  expires_at: isoOrNull(s.expiresAt),
                  last_verified_at: isoOrNull(s.lastVerifiedAt),
                })),
              input_mapping: t.inputMapping ?? {},
            }
          : null,
      last_occurrence: last,
      next_fire_times: nextFireTimes(t, now),
      created_at: iso(t.createdAt),
      updated_at: iso(t.updatedAt),
    };
  });
}

export async function presentTrigger(db: DbOrTx, row: repo.TriggerRow, names: TriggerNames) {
  const [one] = await presentTriggers(db, [row], names);
  return one;
}
