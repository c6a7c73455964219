import { type ConnectorDefinition, connectorFor } from '@sluice/connectors';
import type { Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { conflict, notFound, validationFailed } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { capabilityFor, findDataSource } from '../data-sources/index';
import { recordEvent } from '../events/index';
import * as repo from './queries.repo';

export function toQuery(r: repo.QueryRow) {
  return {
    slug: r.slug,
    name: r.name,
    description: r.description,
    data_source_slug: r.dataSourceSlug,
    statement: r.statement,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

export const src = (scope: Scope, ctx: Ctx) => ({
  organizationId: scope.org.id,
  actor: scope.actor,
  requestId: ctx.requestId,
});

/** The statement as the data source's connector accepts it (its defaults applied). */
export function checkStatement(definition: ConnectorDefinition, statement: unknown): Record<string, unknown> {
  const r = capabilityFor(definition.type, 'query').statementSchema.safeParse(statement);
  if (!r.success) {
    throw validationFailed(
      r.error.issues.map((i) => ({
        path: ['statement', ...i.path.map(String)].join('.'),
        code: i.code,
        message: i.message,
      })),
      `the statement is not valid for a ${definition.label} data source`,
    );
  }
  return r.data as Record<string, unknown>;
}

/** A data source the caller can see; referencing one needs data_sources.read as well. */
async function visibleDataSource(db: DbOrTx, scope: Scope, slug: string) {
  const row = scope.permissions.has('data_sources.read')
    ? await findDataSource(db, scope.org.id, slug)
    : null;
  if (!row) throw notFound('data source');
  return row;
}

export async function listQueries(ctx: Ctx, scope: Scope, query: ListQuery) {
  const page = await repo.listQueries(ctx.deps.db, scope.org.id, query);
  return { ...page, items: page.items.map(toQuery) };
}

export async function getQuery(ctx: Ctx, scope: Scope, slug: string) {
  const row = await repo.findQuery(ctx.deps.db, scope.org.id, slug);
  if (!row) throw notFound('query');
  return toQuery(row);
}

export type CreateQueryInput = {
  name: string;
  data_source_slug: string;
  statement: Record<string, unknown>;
  description?: string | null;
  slug?: string;
};

export async function createQuery(ctx: Ctx, scope: Scope, input: CreateQueryInput) {
  const db = ctx.deps.db;
  const source = await visibleDataSource(db, scope, input.data_source_slug);
  const statement = checkStatement(connectorFor(source.type), input.statement);
  const slug = await chooseSlug(input.slug, input.name, (s) => repo.querySlugTaken(db, scope.org.id, s));
  await db.transaction(async (tx) => {
    if (await repo.querySlugTaken(tx, scope.org.id, slug))
      throw conflict(`a query with slug ${slug} already exists`);
    await repo.insertQuery(tx, {
      organizationId: scope.org.id,
      slug,
      name: input.name,
      description: input.description ?? null,
      dataSourceId: source.id,
      statement,
    });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'query',
      entitySlug: slug,
      action: 'create',
      metadata: { name: input.name, data_source_slug: source.slug },
    });
  });
  return getQuery(ctx, scope, slug);
}

export type UpdateQueryInput = {
  name?: string;
  data_source_slug?: string;
  statement?: Record<string, unknown>;
  description?: string | null;
};

export async function updateQuery(ctx: Ctx, scope: Scope, slug: string, input: UpdateQueryInput) {
  const db = ctx.deps.db;
  const current = await repo.findQuery(db, scope.org.id, slug);
  if (!current) throw notFound('query');
  const source =
    input.data_source_slug !== undefined ? await visibleDataSource(db, scope, input.data_source_slug) : null;
  // A new statement, or the old one moved to another kind of source, must suit that connector.
  const statement =
    input.statement !== undefined || (source && source.type !== current.dataSourceType)
      ? checkStatement(
          connectorFor(source?.type ?? current.dataSourceType),
          input.statement ?? current.statement,
        )
      : undefined;
  await db.transaction(async (tx) => {
    const row = await repo.findQuery(tx, scope.org.id, slug);
    if (!row) throw notFound('query');
    await repo.updateQuery(tx, row.id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(source ? { dataSourceId: source.id } : {}),
      ...(statement ? { statement } : {}),
    });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'query',
      entitySlug: slug,
      action: 'update',
      metadata: { fields: Object.keys(input), ...(source ? { data_source_slug: source.slug } : {}) },
    });
  });
  return getQuery(ctx, scope, slug);
}

export async function deleteQuery(ctx: Ctx, scope: Scope, slug: string) {
  await ctx.deps.db.transaction(async (tx) => {
    const row = await repo.findQuery(tx, scope.org.id, slug);
    if (!row) throw notFound('query');
    await repo.deleteQuery(tx, row.id);
    await recordEvent(tx, src(scope, ctx), { entityType: 'query', entitySlug: slug, action: 'delete' });
  });
}
