import { compatibleTypes, type DerivedRef, deriveRefs, pipelineSpecSchema } from '@sluice/engine';
import type { Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { notFound } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { requirePipeline } from './pipelines.service';
import * as repo from './refs.repo';
import { versionsNewestFirst } from './versions.repo';

type Capability = 'pipeline_source' | 'pipeline_sink';

export function toRef(pipelineSlug: string, r: repo.RefRow) {
  return {
    pipeline_slug: pipelineSlug,
    slug: r.slug,
    name: r.name,
    data_source_type: r.dataSourceType,
    required_capabilities: r.requiredCapabilities as Capability[],
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export async function listRefs(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  pipelineSlug: string,
  query: ListQuery,
) {
  const { pipeline } = await requirePipeline(ctx.deps.db, scope, projectSlug, pipelineSlug);
  const page = await repo.listRefs(ctx.deps.db, pipeline.id, query);
  return { ...page, items: page.items.map((r) => toRef(pipeline.slug, r)) };
}

export async function getRef(
  ctx: Ctx,
  scope: Scope,
  projectSlug: string,
  pipelineSlug: string,
  slug: string,
) {
  const { pipeline } = await requirePipeline(ctx.deps.db, scope, projectSlug, pipelineSlug);
  const ref = await repo.findRef(ctx.deps.db, pipeline.id, slug);
  if (!ref) throw notFound('data source ref');
  return toRef(pipeline.slug, ref);
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Makes the pipeline's refs those of its newest version: new refs are created, kept ones take
 * the newest type and capabilities, and refs the version no longer uses are deleted unless a
 * binding still points at them (deleting those would silently unbind an environment).
 */
export async function syncRefs(
  db: DbOrTx,
  organizationId: string,
  pipelineId: string,
  derived: DerivedRef[],
) {
  const existing = new Map((await repo.refsOf(db, pipelineId)).map((r) => [r.slug, r]));
  const created: string[] = [];
  const updated: string[] = [];
  for (const d of derived) {
    const values = { dataSourceType: d.data_source_type, requiredCapabilities: d.required_capabilities };
    const row = existing.get(d.slug);
    if (!row) {
      await repo.insertRef(db, { organizationId, pipelineId, slug: d.slug, name: d.slug, ...values });
      created.push(d.slug);
    } else if (
      row.dataSourceType !== values.dataSourceType ||
      !sameList(row.requiredCapabilities, values.requiredCapabilities)
    ) {
      await repo.updateRef(db, row.id, values);
      updated.push(d.slug);
    }
  }
  const unused = [...existing.values()].filter((r) => !derived.some((d) => d.slug === r.slug));
  const bound = await repo.boundRefIds(
    db,
    unused.map((r) => r.id),
  );
  const removed = unused.filter((r) => !bound.has(r.id));
  await repo.deleteRefs(
    db,
    removed.map((r) => r.id),
  );
  return { created, updated, removed: removed.map((r) => r.slug) };
}

/**
 * The data source types a ref can be bound to: those serving every operation type the steps
 * using it have, in the newest version that uses it. Null when no stored version uses it.
 */
export async function typesForRef(db: DbOrTx, pipelineId: string, refSlug: string): Promise<string[] | null> {
  const batch = 20;
  for (let offset = 0; ; offset += batch) {
    const versions = await versionsNewestFirst(db, pipelineId, batch, offset);
    for (const v of versions) {
      const parsed = pipelineSpecSchema.safeParse(v.spec);
      if (!parsed.success) continue;
      const ref = deriveRefs(parsed.data).refs.find((r) => r.slug === refSlug);
      if (ref) return typesForOperations(ref.operation_types);
    }
    if (versions.length < batch) return null;
  }
}

export function typesForOperations(operationTypes: DerivedRef['operation_types']): string[] {
  if (operationTypes.length === 0) return [];
  return operationTypes.map((t) => compatibleTypes[t]).reduce((a, b) => a.filter((x) => b.includes(x)));
}
