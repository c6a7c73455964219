import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Ctx, Scope } from '../../context';
import { conflict, validationFailed } from '../../http/errors';
import { randomSuffix, slugify } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { assertProtectedConfirmation } from '../environments/index';
import { recordEvent } from '../events/index';
import { eventSource } from '../pipelines/index';
import { checkSchedule, preview, ScheduleError, type ScheduleSpec, tzVersion } from './schedule-calc';
import { addSecret } from './trigger-secrets';
import { decideTrigger, nextFireAfter } from './trigger-tick';
import { lockResolve, requireTrigger, resolve, type TriggerPe } from './triggers.place';
import { presentTrigger, presentTriggers } from './triggers.present';
import * as repo from './triggers.repo';
import type * as s from './triggers.schemas';

type CreateBody = z.infer<typeof s.createTriggerBody>;
type UpdateBody = z.infer<typeof s.updateTriggerBody>;

function specOf(x: z.infer<typeof s.scheduleInput>): ScheduleSpec {
  return {
    cron: x.cron,
    timeZone: x.time_zone,
    jitterSeconds: x.jitter_seconds,
    startAt: x.start_at ? new Date(x.start_at) : null,
    endAt: x.end_at ? new Date(x.end_at) : null,
  };
}

function checkOrThrow(spec: ScheduleSpec, now: Date) {
  try {
    checkSchedule(spec, now);
  } catch (err) {
    if (err instanceof ScheduleError) {
      throw validationFailed([
        { path: `schedule.${err.path}`, code: 'invalid_schedule', message: err.message },
      ]);
    }
    throw err;
  }
}

function previewOf(spec: ScheduleSpec | null, seed: string, now: Date) {
  return {
    dry_run: true as const,
    valid: true as const,
    time_zone: spec?.timeZone ?? null,
    tz_version: tzVersion(),
    next_fire_times: spec ? preview(spec, seed, now, 10) : [],
  };
}

export async function listTriggers(ctx: Ctx, scope: Scope, pe: TriggerPe, query: ListQuery) {
  const { tp, names } = await resolve(ctx.deps.db, scope, pe);
  const page = await repo.listTriggers(ctx.deps.db, tp, query);
  return { ...page, items: await presentTriggers(ctx.deps.db, page.items, names) };
}

export async function getTrigger(ctx: Ctx, scope: Scope, pe: TriggerPe, slug: string) {
  const { tp, names } = await resolve(ctx.deps.db, scope, pe);
  return presentTrigger(ctx.deps.db, await requireTrigger(ctx.deps.db, tp, slug), names);
}

export async function createTrigger(
  ctx: Ctx,
  scope: Scope,
  pe: TriggerPe,
  body: CreateBody,
  dryRun: boolean,
  confirmation: string | null,
) {
  const { deps } = ctx;
  const now = new Date();
  const sched = body.kind === 'schedule' ? body.schedule : undefined;
  const spec = sched ? specOf(sched) : null;
  if (spec) checkOrThrow(spec, now);
  return deps.db.transaction(async (tx) => {
    const { tp, names, environment } = await lockResolve(tx, scope, pe);
    if (dryRun) return { preview: previewOf(spec, randomUUID(), now) };
    assertProtectedConfirmation(environment, confirmation);
    // A generated webhook slug always carries a random suffix: the public route names only it.
    const slug =
      body.kind === 'webhook' && !body.slug
        ? await chooseSlug(`${slugify(body.name).slice(0, 53)}-${randomSuffix(6)}`, body.name, () =>
            Promise.resolve(false),
          )
        : await chooseSlug(body.slug, body.name, (x) => repo.slugTaken(tx, scope.org.id, x));
    if (body.slug && (await repo.slugTaken(tx, scope.org.id, slug)))
      throw conflict(`trigger slug ${slug} is already taken`);
    const id = randomUUID();
    const row = await repo.insertTrigger(tx, {
      id,
      ...tp,
      slug,
      name: body.name,
      description: body.description ?? null,
      kind: body.kind,
      enabled: body.enabled ?? true,
      paused: body.paused ?? false,
      pauseNote: body.paused ? (body.pause_note ?? null) : null,
      cron: sched?.cron ?? null,
      timeZone: sched?.time_zone ?? null,
      overlap: sched?.overlap ?? null,
      catchUpPolicy: sched?.catch_up.policy ?? null,
      catchUpWindowSeconds: sched?.catch_up.window_seconds ?? null,
      catchUpMaxRuns: sched?.catch_up.max_runs ?? null,
      jitterSeconds: sched?.jitter_seconds ?? null,
      startAt: spec?.startAt ?? null,
      endAt: spec?.endAt ?? null,
      cursorNominalAt: spec ? now : null,
      inputMapping: body.kind === 'webhook' ? (body.webhook.input_mapping ?? null) : null,
    });
    if (!row) throw conflict(`trigger slug ${slug} is already taken`);
    const withNext = spec
      ? await repo.updateTrigger(tx, row.id, { nextFireAt: nextFireAfter(row, now) })
      : row;
    const secret = body.kind === 'webhook' ? await addSecret(tx, deps, row) : null;
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_trigger',
      entitySlug: slug,
      action: 'create',
      security: body.kind === 'webhook',
      metadata: {
        kind: body.kind,
        pipeline_slug: names.pipelineSlug,
        environment_slug: names.environmentSlug,
      },
    });
    const trigger = await presentTrigger(tx, withNext, names);
    return { trigger: secret ? { ...trigger, secret } : trigger, secret };
  });
}

export async function updateTrigger(
  ctx: Ctx,
  scope: Scope,
  pe: TriggerPe,
  slug: string,
  body: UpdateBody,
  dryRun: boolean,
  confirmation: string | null,
) {
  const { deps } = ctx;
  return deps.db.transaction(async (tx) => {
    const { tp, names, environment } = await lockResolve(tx, scope, pe);
    const t = await requireTrigger(tx, tp, slug, true);
    if (body.schedule && t.kind !== 'schedule')
      throw validationFailed([{ path: 'schedule', code: 'invalid', message: 'not a schedule trigger' }]);
    if (body.webhook && t.kind !== 'webhook')
      throw validationFailed([{ path: 'webhook', code: 'invalid', message: 'not a webhook trigger' }]);
    const now = new Date();
    const sp = body.schedule ?? {};
    const spec: ScheduleSpec | null =
      t.kind === 'schedule'
        ? {
            cron: sp.cron ?? t.cron!,
            timeZone: sp.time_zone ?? t.timeZone!,
            jitterSeconds: sp.jitter_seconds ?? t.jitterSeconds ?? 0,
            startAt: sp.start_at !== undefined ? (sp.start_at ? new Date(sp.start_at) : null) : t.startAt,
            endAt: sp.end_at !== undefined ? (sp.end_at ? new Date(sp.end_at) : null) : t.endAt,
          }
        : null;
    if (spec) checkOrThrow(spec, now);
    if (dryRun) return { preview: previewOf(spec, t.id, now) };
    assertProtectedConfirmation(environment, confirmation);

    // Resuming: occurrences that came due while paused are recorded as skipped_paused first,
    // so resuming never replays them.
    if (t.paused && body.paused === false && t.kind === 'schedule') {
      let row = t;
      for (let i = 0; i < 10_000; i++) {
        const r = await decideTrigger(tx, deps, row, now);
        if (!r.more) break;
        row = (await repo.findTrigger(tx, tp, slug))!;
      }
    }

    const timingChanged = ['cron', 'time_zone', 'jitter_seconds', 'start_at', 'end_at'].some((k) => k in sp);
    const enabling = body.enabled === true && !t.enabled;
    const cursor =
      t.kind === 'schedule' && (timingChanged || enabling)
        ? t.cursorNominalAt && t.cursorNominalAt > now
          ? t.cursorNominalAt
          : now
        : undefined;
    const fresh = (await repo.findTrigger(tx, tp, slug))!;
    const patched: repo.TriggerRow = {
      ...fresh,
      name: body.name ?? fresh.name,
      description: body.description !== undefined ? body.description : fresh.description,
      enabled: body.enabled ?? fresh.enabled,
      paused: body.paused ?? fresh.paused,
      pauseNote:
        (body.paused ?? fresh.paused)
          ? body.pause_note !== undefined
            ? body.pause_note
            : fresh.pauseNote
          : null,
      cron: spec?.cron ?? null,
      timeZone: spec?.timeZone ?? null,
      jitterSeconds: spec ? spec.jitterSeconds : null,
      startAt: spec?.startAt ?? null,
      endAt: spec?.endAt ?? null,
      overlap: sp.overlap ?? fresh.overlap,
      catchUpPolicy: sp.catch_up?.policy ?? fresh.catchUpPolicy,
      catchUpWindowSeconds: sp.catch_up?.window_seconds ?? fresh.catchUpWindowSeconds,
      catchUpMaxRuns: sp.catch_up?.max_runs ?? fresh.catchUpMaxRuns,
      cursorNominalAt: cursor ?? fresh.cursorNominalAt,
      inputMapping: body.webhook?.input_mapping ?? fresh.inputMapping,
    };
    if (patched.overlap !== 'buffer_one') patched.bufferedNominalAt = null;
    const { id: _id, createdAt: _c, updatedAt: _u, ...rest } = patched;
    const nextFireAt =
      spec && patched.cursorNominalAt ? nextFireAfter(patched, patched.cursorNominalAt) : null;
    const saved = await repo.updateTrigger(tx, t.id, { ...rest, nextFireAt });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_trigger',
      entitySlug: slug,
      action: 'update',
      metadata: {
        fields: Object.keys(body).filter((k) => k !== 'protected_environment_confirmation'),
        ...(body.paused !== undefined ? { paused: body.paused } : {}),
        ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      },
    });
    return { trigger: await presentTrigger(tx, saved, names) };
  });
}

export async function deleteTrigger(
  ctx: Ctx,
  scope: Scope,
  pe: TriggerPe,
  slug: string,
  confirmation: string | null,
) {
  await ctx.deps.db.transaction(async (tx) => {
    const { tp, environment } = await lockResolve(tx, scope, pe);
    const t = await requireTrigger(tx, tp, slug, true);
    assertProtectedConfirmation(environment, confirmation);
    await repo.deleteTrigger(tx, t.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_trigger',
      entitySlug: slug,
      action: 'delete',
      metadata: { kind: t.kind },
    });
  });
}
