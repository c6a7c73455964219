import type { Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { onReads, ReadFromStore } from '../../db/replica';
import { AppError, notFound } from '../../http/errors';
import { iso, isoOrNull } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { eventSource } from '../environments/index';
import { recordEvent } from '../events/index';
import * as logs from './run-logs.repo';
import { closeOpenSteps, insertLogs } from './run-progress.repo';
import * as repo from './runs.repo';
import type { ListRunsQuery, RunState } from './runs.schemas';
import { terminalRunStates } from './runs.schemas';
import type { PeSlugs } from './runs-by-slug.repo';
import * as bySlug from './runs-by-slug.repo';

export function toStep(s: repo.RunStepRow | repo.ListedStep) {
  return {
    step_slug: s.stepSlug,
    state: s.state as 'pending',
    rows_in: s.rowsIn,
    rows_out: s.rowsOut,
    bytes_in: s.bytesIn,
    bytes_out: s.bytesOut,
    started_at: isoOrNull(s.startedAt),
    finished_at: isoOrNull(s.finishedAt),
    error: s.error ?? null,
  };
}

export function toRun(r: repo.RunRow | repo.RunListRow, steps: (repo.RunStepRow | repo.ListedStep)[]) {
  return {
    slug: r.slug,
    pipeline_slug: r.pipelineSlug,
    environment_slug: r.environmentSlug,
    spec_hash: r.specHash,
    state: r.state as RunState,
    trigger: r.trigger as 'api',
    trigger_slug: r.triggerSlug,
    input_keys: r.inputKeys,
    attempt: r.attempt,
    created_at: iso(r.createdAt),
    started_at: isoOrNull(r.startedAt),
    finished_at: isoOrNull(r.finishedAt),
    error: r.error ?? null,
    contract_checks: r.contractChecks ?? [],
    steps: steps.map(toStep),
  };
}

export type RunResource = ReturnType<typeof toRun>;

/** `{pe}` of the URL: the project and a live environment enabled for it, else 404. */
export async function resolvePlace(db: DbOrTx, scope: Scope, projectSlug: string, environmentSlug: string) {
  const place = await bySlug.findPlace(db, scope.org.id, {
    project: projectSlug,
    environment: environmentSlug,
  });
  if (!place) throw notFound('project environment');
  return { place };
}

export async function runResource(db: DbOrTx, run: repo.RunRow): Promise<RunResource> {
  const steps = await repo.stepsOfRuns(db, [run.id]);
  return toRun(run, steps.get(run.id) ?? []);
}

export type { PeSlugs };

export async function listRuns(ctx: Ctx, scope: Scope, pe: PeSlugs, query: ListRunsQuery) {
  // A read replica answers while it is fresh (db/replica.ts); the store otherwise.
  return onReads(ctx.deps, async (store) => {
    if (repo.isPlainFirstPage(query)) {
      // One statement finds the project environment and reads the page (runs-by-slug.repo.ts).
      const page = await bySlug.listRunsFirstPage(store, scope.org.id, pe, query);
      if (!page) throw notFound('project environment');
      return { ...page, items: page.items.map((r) => toRun(r, r.steps)) };
    }
    // Without a pipeline filter, the page reads the runs by the project's pipelines: found with
    // the project environment.
    const place = query.pipeline_slug
      ? (await resolvePlace(store.db, scope, pe.project, pe.environment)).place
      : await bySlug.findPlaceWithPipelines(store.db, scope.org.id, pe);
    if (!place) throw notFound('project environment');
    const page = await repo.listRuns(store.db, place, query);
    return { ...page, items: page.items.map((r) => toRun(r, r.steps)) };
  });
}

async function requireRun(db: DbOrTx, scope: Scope, pe: PeSlugs, slug: string) {
  const { place } = await resolvePlace(db, scope, pe.project, pe.environment);
  const run = await repo.findRun(db, place, slug);
  if (!run) throw notFound('run');
  return run;
}

/** One statement: the project environment, the run and its steps (runs-by-slug.repo.ts findRunBySlugs). */
export async function getRun(ctx: Ctx, scope: Scope, pe: PeSlugs, slug: string): Promise<RunResource> {
  const found = await bySlug.findRunBySlugs(ctx.deps.store, scope.org.id, pe, slug);
  if (!found) throw notFound('project environment');
  if (!found.run) throw notFound('run');
  return toRun(found.run, found.run.steps);
}

/**
 * A queued run is canceled at once; a running one becomes `canceling` and its worker, which
 * watches the run on every heartbeat, stops the steps and ends it `canceled`.
 */
export async function cancelRun(ctx: Ctx, scope: Scope, pe: PeSlugs, slug: string) {
  return ctx.deps.db.transaction(async (tx) => {
    const found = await requireRun(tx, scope, pe, slug);
    const run = await repo.lockRunById(tx, found.id);
    if (!run) throw notFound('run');
    const state = run.state as RunState;
    if (terminalRunStates.includes(state)) {
      throw new AppError('CONFLICT', `run ${slug} already ended (${state}); it cannot be canceled`);
    }
    if (state !== 'canceling') {
      const now = new Date();
      const next = state === 'queued' ? 'canceled' : 'canceling';
      await repo.updateRun(tx, run.id, {
        state: next,
        cancelRequestedAt: now,
        ...(next === 'canceled' ? { finishedAt: now } : {}),
      });
      if (next === 'canceled') {
        await closeOpenSteps(tx, run.id);
        await repo.deleteRunInput(tx, run.id);
      }
      await insertLogs(tx, run.id, [
        { stepSlug: null, level: 'info', message: `cancel requested by ${scope.actor.type}`, at: now },
      ]);
      await recordEvent(tx, eventSource(scope, ctx), {
        entityType: 'pipeline_run',
        entitySlug: run.slug,
        action: 'update',
        metadata: { pipeline_slug: found.pipelineSlug, state: next, requested: 'cancel' },
      });
    }
    const after = await repo.findRunById(tx, run.id);
    return runResource(tx, after!);
  });
}

export function toLog(l: { seq: number; stepSlug: string | null; level: string; message: string; at: Date }) {
  return {
    seq: l.seq,
    step_slug: l.stepSlug,
    level: l.level as 'info',
    message: l.message,
    at: iso(l.at),
  };
}

export async function listLogs(ctx: Ctx, scope: Scope, pe: PeSlugs, slug: string, query: ListQuery) {
  return onReads(ctx.deps, async (store, standby) => {
    // The project environment and the run in one statement, then the page.
    const found = await bySlug.findRunSpanBySlugs(store, scope.org.id, pe, slug);
    if (!found) throw notFound('project environment');
    if (!found.run) throw notFound('run');
    // A run the standby holds as ended has all its lines there; a running run's log is read from
    // the store, so a client that saw the run end there never gets a page without its last lines.
    if (standby && found.run.finishedAt === null) throw new ReadFromStore();
    const page = await logs.listLogs(store.db, found.run, query);
    return { ...page, items: page.items.map(toLog) };
  });
}
