import type { Ctx, Scope } from '../../context';
import { notFound, validationFailed } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { findDataSource } from '../data-sources/index';
import { assertProtectedConfirmation } from '../environments/index';
import { recordEvent } from '../events/index';
import * as repo from './bindings.repo';
import { eventSource, lockPipelineOf, lockPlace, requirePlace } from './pipelines.service';
import { findRef } from './refs.repo';
import { typesForRef } from './refs.service';

export function toBinding(environmentSlug: string, r: repo.BindingView) {
  return {
    pipeline_slug: r.pipelineSlug,
    data_source_ref_slug: r.refSlug,
    data_source_ref_name: r.refName,
    environment_slug: environmentSlug,
    data_source_slug: r.dataSourceSlug,
    data_source_name: r.dataSourceName,
    data_source_type: r.dataSourceType,
    data_source_active: r.dataSourceActive,
    data_source_read_only: r.dataSourceReadOnly,
    bound_at: iso(r.boundAt),
    updated_at: iso(r.updatedAt),
  };
}

export async function listBindings(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  environmentSlug: string,
  query: ListQuery & { pipeline_slug?: string },
) {
  const place = await requirePlace(ctx.deps.db, scope, projectSlug, environmentSlug);
  const page = await repo.listBindings(ctx.deps.db, place.project.id, place.environment.id, query);
  return { ...page, items: page.items.map((r) => toBinding(place.environment.slug, r)) };
}

type BindingTarget = { project: string; environment: string; pipeline: string; ref: string };

/**
 * Binds a ref to a data source in one environment (creates or replaces the binding). A data
 * source of a type that cannot serve the ref's operations is refused here, not at run time.
 */
export async function putBinding(
  ctx: Ctx,
  scope: Scope,
  at: BindingTarget,
  dataSourceSlug: string,
  confirmation: string | null,
) {
  return ctx.deps.db.transaction(async (tx) => {
    const place = await lockPlace(tx, scope, at.project, at.environment);
    // Locked: a concurrent push may delete unbound refs.
    const pipeline = await lockPipelineOf(tx, place.project.id, at.pipeline);
    const ref = await findRef(tx, pipeline.id, at.ref);
    if (!ref) throw notFound('data source ref');
    const ds = await findDataSource(tx, scope.org.id, dataSourceSlug);
    if (!ds) throw notFound('data source');
    const types =
      (await typesForRef(tx, pipeline.id, ref.slug)) ?? (ref.dataSourceType ? [ref.dataSourceType] : null);
    if (types && !types.includes(ds.type))
      throw validationFailed([
        {
          path: 'data_source_slug',
          code: 'incompatible_type',
          message:
            types.length > 0
              ? `ref ${ref.slug} needs a data source of type ${types.join(' or ')}; ${ds.slug} is ${ds.type}`
              : `no data source type serves every operation of ref ${ref.slug}; fix the spec first`,
        },
      ]);
    assertProtectedConfirmation(place.environment, confirmation);
    const existing = await repo.findBinding(tx, ref.id, place.environment.id);
    if (existing?.dataSourceId !== ds.id) {
      if (existing) await repo.rebind(tx, existing.id, ds.id);
      else
        await repo.insertBinding(tx, {
          organizationId: scope.org.id,
          pipelineId: pipeline.id,
          refId: ref.id,
          environmentId: place.environment.id,
          dataSourceId: ds.id,
        });
      await recordEvent(tx, eventSource(scope, ctx), {
        entityType: 'data_source_binding',
        entitySlug: ref.slug,
        action: existing ? 'update' : 'create',
        metadata: {
          project_slug: place.project.slug,
          pipeline_slug: pipeline.slug,
          environment_slug: place.environment.slug,
          data_source_ref_slug: ref.slug,
          data_source_slug: ds.slug,
        },
      });
    }
    const view = await repo.findBindingView(tx, ref.id, place.environment.id);
    if (!view) throw notFound('data source binding');
    return { created: !existing, item: toBinding(place.environment.slug, view) };
  });
}

export async function deleteBinding(ctx: Ctx, scope: Scope, at: BindingTarget, confirmation: string | null) {
  await ctx.deps.db.transaction(async (tx) => {
    const place = await lockPlace(tx, scope, at.project, at.environment);
    const pipeline = await lockPipelineOf(tx, place.project.id, at.pipeline);
    const ref = await findRef(tx, pipeline.id, at.ref);
    if (!ref) throw notFound('data source ref');
    const existing = await repo.findBinding(tx, ref.id, place.environment.id);
    if (!existing) throw notFound('data source binding');
    assertProtectedConfirmation(place.environment, confirmation);
    await repo.deleteBinding(tx, existing.id);
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'data_source_binding',
      entitySlug: ref.slug,
      action: 'delete',
      metadata: {
        project_slug: place.project.slug,
        pipeline_slug: pipeline.slug,
        environment_slug: place.environment.slug,
        data_source_ref_slug: ref.slug,
      },
    });
  });
}
