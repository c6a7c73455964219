import type { CaptureStatus } from '@sluice/connectors';
import type { Ctx, Scope } from '../../context';
import { AppError, conflict, notFound } from '../../http/errors';
import { isoOrNull } from '../../http/fields';
import { type ListQuery, paginateInMemory } from '../../http/pagination';
import { capabilityFor, describeFailure, getRow, loadConnection, src } from '../data-sources/index';
import { recordEvent } from '../events/index';
import { activeDeployments, findPipeline } from './captures.repo';
import { type OwnedCapture, ownedCaptures } from './owned';
import { readOwnedStatuses, readStatuses, retentionExpiresAt } from './statuses';

// The capture status operations of the API (docs/cdc.md "Slot safety"): per pipeline
// deployment, per data source, and dropping an orphan.

const idOf = (name: string) => name.replace(/_/g, '-');
const sortsOf = <T extends { capture_name: string }>() => ({
  capture_name: { kind: 'text' as const, valueOf: (c: T) => c.capture_name },
});

const statusFields = (s: CaptureStatus | undefined) => ({
  lag_bytes: s?.lag_bytes ?? null,
  confirmed_position: s?.confirmed_position ?? null,
  wal_status: s?.wal_status ?? null,
  safe_wal_bytes: s?.safe_wal_bytes ?? null,
});

const ownerOf = (o: OwnedCapture) => ({
  project_slug: o.projectSlug,
  pipeline_slug: o.pipelineSlug,
  environment_slug: o.environmentSlug,
  step_slug: o.stepSlug,
});

export async function listPipelineCaptures(
  ctx: Ctx,
  scope: Scope,
  at: { project: string; pipeline: string },
  query: ListQuery & { environment_slug?: string },
) {
  const { deps } = ctx;
  const pipeline = await findPipeline(deps.db, scope.org.id, at.project, at.pipeline);
  if (!pipeline) throw notFound('pipeline');
  const owned = ownedCaptures(await activeDeployments(deps.db, scope.org.id, pipeline.id)).filter(
    (o) => !query.environment_slug || o.environmentSlug === query.environment_slug,
  );
  const reads = await readOwnedStatuses(deps, owned);
  const items = owned.map((o) => {
    const read = reads.get(o.name);
    const status = read?.statuses?.find((s) => s.name === o.name);
    return {
      step_slug: o.stepSlug,
      environment_slug: o.environmentSlug,
      data_source_slug: o.dataSource.slug,
      capture_name: o.name,
      ...statusFields(status),
      active: status ? status.active : null,
      status: read?.failure ? ('unreachable' as const) : status ? ('ok' as const) : ('missing' as const),
      error: read?.failure ?? null,
      last_checkpoint_at: isoOrNull(o.lastCheckpointAt),
      retention_expires_at: isoOrNull(retentionExpiresAt(status, o.lastCheckpointAt)),
    };
  });
  return paginateInMemory({
    query,
    sorts: sortsOf<(typeof items)[number]>(),
    idOf: (c) => idOf(c.capture_name),
    rows: items,
  });
}

/** The data source's captures read now; a failing source is 502 REMOTE_FAILED (as branches). */
async function capturesOnSource(ctx: Ctx, scope: Scope, slug: string) {
  const row = await getRow(ctx, scope, slug);
  capabilityFor(row.type, 'changes');
  const read = await readStatuses(ctx.deps, row);
  if (read.failure) {
    if (read.failure.code === 'PRIVATE_HOST_BLOCKED')
      throw new AppError('PRIVATE_HOST_BLOCKED', read.failure.message);
    throw new AppError('REMOTE_FAILED', `the captures could not be listed: ${read.failure.message}`, {
      detailedError: read.failure.code,
    });
  }
  const owned = ownedCaptures(await activeDeployments(ctx.deps.db, scope.org.id)).filter(
    (o) => o.dataSource.id === row.id,
  );
  return { row, statuses: read.statuses, owned: new Map(owned.map((o) => [o.name, o])) };
}

export async function listDataSourceCaptures(ctx: Ctx, scope: Scope, slug: string, query: ListQuery) {
  const { statuses, owned } = await capturesOnSource(ctx, scope, slug);
  const items = statuses.map((s) => {
    const owner = owned.get(s.name);
    return {
      capture_name: s.name,
      ...statusFields(s),
      active: s.active,
      orphan: !owner,
      owner: owner ? ownerOf(owner) : null,
    };
  });
  return paginateInMemory({
    query,
    sorts: sortsOf<(typeof items)[number]>(),
    idOf: (c) => idOf(c.capture_name),
    rows: items,
  });
}

/**
 * Drops an orphan capture from the data source (docs/cdc.md "Slot safety"). A capture a
 * deployed step owns is refused: undeploy the pipeline (or deploy a version without the step).
 */
export async function dropDataSourceCapture(ctx: Ctx, scope: Scope, slug: string, name: string) {
  const { deps } = ctx;
  const { row, statuses, owned } = await capturesOnSource(ctx, scope, slug);
  const owner = owned.get(name);
  if (owner) {
    throw conflict(
      `capture ${name} belongs to step ${owner.stepSlug} of pipeline ${owner.pipelineSlug} deployed in ${owner.environmentSlug}; undeploy it instead`,
    );
  }
  if (!statuses.some((s) => s.name === name)) throw notFound('capture');
  const loaded = await loadConnection(deps.db, deps, row);
  try {
    await capabilityFor(row.type, 'changes').release(loaded.connection, name, loaded.ctx);
  } catch (err) {
    const { failure } = describeFailure(err);
    throw new AppError('REMOTE_FAILED', `the capture could not be dropped: ${failure.message}`, {
      detailedError: failure.code,
    });
  }
  await deps.db.transaction(async (tx) => {
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: row.slug,
      action: 'release',
      metadata: { capture_name: name, released: true, orphan: true },
    });
  });
}
