import { eq } from 'drizzle-orm';
import type { Ctx, Scope } from '../../context';
import type { DbOrTx } from '../../db/client';
import { dataSources, pipelines } from '../../db/schema/index';
import { conflict, notFound, type ValidationIssue, validationFailed } from '../../http/errors';
import { iso } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { chooseSlug } from '../../http/slugs';
import { recordEvent } from '../events/index';
import { eventSource } from '../projects/index';
import { allDestinations } from './destinations.repo';
import * as repo from './policies.repo';

type Filters = {
  notification_type?: string | null;
  severity?: string | null;
  lifecycle_state?: string | null;
  source_kind?: string | null;
  source_action?: string | null;
  source_ref?: string | null;
};
type PolicyInput = Filters & {
  name?: string;
  slug?: string;
  scope?: 'organization' | 'project' | 'project_environment';
  project_slug?: string | null;
  environment_slug?: string | null;
  destination_slugs?: string[];
  enabled?: boolean;
};

export function toPolicy(r: repo.PolicyWithDestinations) {
  return {
    slug: r.slug,
    name: r.name,
    scope: r.scope as 'organization',
    project_slug: r.projectSlug,
    environment_slug: r.environmentSlug,
    notification_type: r.notificationType as any,
    severity: r.severity as any,
    lifecycle_state: r.lifecycleState as any,
    source_kind: r.sourceKind as any,
    source_action: r.sourceAction as any,
    source_ref: r.sourceRef,
    destination_slugs: r.destinations.map((d) => d.slug),
    enabled: r.enabled,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
  };
}

/** The three scope rules of docs/alerting.md#policies-and-matching; every violation is reported. */
export function scopeIssues(
  scope: string,
  project: string | null,
  environment: string | null,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const must = (path: string, message: string) => issues.push({ path, code: 'scope_rule', message });
  if (scope === 'organization') {
    if (project !== null) must('project_slug', 'scope organization takes no project_slug');
    if (environment !== null) must('environment_slug', 'scope organization takes no environment_slug');
  } else if (scope === 'project') {
    if (project === null) must('project_slug', 'scope project requires project_slug');
    if (environment !== null) must('environment_slug', 'scope project takes no environment_slug');
  } else if (scope === 'project_environment') {
    if (project === null) must('project_slug', 'scope project_environment requires project_slug');
    if (environment === null) must('environment_slug', 'scope project_environment requires environment_slug');
  } else {
    must('scope', 'scope must be organization, project or project_environment');
  }
  return issues;
}

async function resolveDestinations(tx: DbOrTx, organizationId: string, slugs: string[]) {
  const unique = [...new Set(slugs)];
  const found = await repo.destinationsBySlug(tx, organizationId, unique);
  const bySlug = new Map(found.map((d) => [d.slug, d.id]));
  const issues: ValidationIssue[] = [];
  slugs.forEach((s, i) => {
    if (!bySlug.has(s))
      issues.push({
        path: `destination_slugs.${i}`,
        code: 'not_found',
        message: `no alert destination ${s}`,
      });
  });
  return { ids: unique.map((s) => bySlug.get(s)!), issues };
}

const filterColumns = (input: Filters) => ({
  ...(input.notification_type !== undefined ? { notificationType: input.notification_type } : {}),
  ...(input.severity !== undefined ? { severity: input.severity } : {}),
  ...(input.lifecycle_state !== undefined ? { lifecycleState: input.lifecycle_state } : {}),
  ...(input.source_kind !== undefined ? { sourceKind: input.source_kind } : {}),
  ...(input.source_action !== undefined ? { sourceAction: input.source_action } : {}),
  ...(input.source_ref !== undefined ? { sourceRef: input.source_ref } : {}),
});

const policyEvent = (slug: string, action: 'create' | 'update' | 'delete', extra = {}) => ({
  entityType: 'organization' as const,
  entitySlug: null,
  action,
  metadata: { alert_policy_slug: slug, ...extra },
});

export async function listPolicies(ctx: Ctx, scope: Scope, query: ListQuery) {
  const page = await repo.listPolicies(ctx.deps.db, scope.org.id, query);
  return { ...page, items: page.items.map(toPolicy) };
}

export async function getPolicy(ctx: Ctx, scope: Scope, slug: string) {
  const row = await repo.findPolicy(ctx.deps.db, scope.org.id, slug);
  if (!row) throw notFound('alert policy');
  return toPolicy(row);
}

export async function createPolicy(ctx: Ctx, scope: Scope, input: PolicyInput & { name: string }) {
  const db = ctx.deps.db;
  const project = input.project_slug ?? null;
  const environment = input.environment_slug ?? null;
  const issues = scopeIssues(input.scope ?? 'unknown', project, environment);
  const slug = await chooseSlug(input.slug, input.name, (s) => repo.policySlugTaken(db, scope.org.id, s));
  const row = await db.transaction(async (tx) => {
    const dest = await resolveDestinations(tx, scope.org.id, input.destination_slugs ?? []);
    if (issues.length + dest.issues.length > 0) throw validationFailed([...issues, ...dest.issues]);
    if (await repo.policySlugTaken(tx, scope.org.id, slug))
      throw conflict(`an alert policy with slug ${slug} already exists`);
    const created = await repo.insertPolicy(tx, {
      organizationId: scope.org.id,
      slug,
      name: input.name,
      scope: input.scope!,
      projectSlug: project,
      environmentSlug: environment,
      ...filterColumns(input),
      enabled: input.enabled ?? true,
    });
    await repo.setPolicyDestinations(tx, created.id, dest.ids);
    await recordEvent(tx, eventSource(scope, ctx), policyEvent(slug, 'create', { scope: input.scope }));
    return repo.findPolicy(tx, scope.org.id, slug);
  });
  return toPolicy(row!);
}

export async function updatePolicy(ctx: Ctx, scope: Scope, slug: string, input: PolicyInput) {
  const row = await ctx.deps.db.transaction(async (tx) => {
    const found = await repo.findPolicy(tx, scope.org.id, slug);
    if (!found) throw notFound('alert policy');
    const nextScope = input.scope ?? found.scope;
    const project = input.project_slug !== undefined ? input.project_slug : found.projectSlug;
    const environment = input.environment_slug !== undefined ? input.environment_slug : found.environmentSlug;
    const issues = scopeIssues(nextScope, project, environment);
    const dest = input.destination_slugs
      ? await resolveDestinations(tx, scope.org.id, input.destination_slugs)
      : { ids: null, issues: [] };
    if (issues.length + dest.issues.length > 0) throw validationFailed([...issues, ...dest.issues]);
    await repo.updatePolicy(tx, found.id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      scope: nextScope,
      projectSlug: project,
      environmentSlug: environment,
      ...filterColumns(input),
    });
    if (dest.ids) await repo.setPolicyDestinations(tx, found.id, dest.ids);
    await recordEvent(
      tx,
      eventSource(scope, ctx),
      policyEvent(slug, 'update', { fields: Object.keys(input) }),
    );
    return repo.findPolicy(tx, scope.org.id, slug);
  });
  return toPolicy(row!);
}

export async function deletePolicy(ctx: Ctx, scope: Scope, slug: string) {
  await ctx.deps.db.transaction(async (tx) => {
    const found = await repo.findPolicy(tx, scope.org.id, slug);
    if (!found) throw notFound('alert policy');
    await repo.deletePolicy(tx, found.id);
    await recordEvent(tx, eventSource(scope, ctx), policyEvent(slug, 'delete'));
  });
}

/** The (entity type, actions) pairs notifications are raised from today (docs/alerting.md). */
export const notificationSources = [
  { source_kind: 'pipeline_run', source_actions: ['update'] },
  { source_kind: 'pipeline_trigger', source_actions: ['execute'] },
  { source_kind: 'data_source', source_actions: ['refresh', 'create', 'read'] },
  { source_kind: 'pipeline', source_actions: ['create'] },
  { source_kind: 'notification', source_actions: ['update'] },
] as const;

export async function sourceMetadata(ctx: Ctx, scope: Scope) {
  const db = ctx.deps.db;
  const [ps, ds, dests] = await Promise.all([
    db
      .select({ slug: pipelines.slug, name: pipelines.name })
      .from(pipelines)
      .where(eq(pipelines.organizationId, scope.org.id)),
    db
      .select({ slug: dataSources.slug, name: dataSources.name })
      .from(dataSources)
      .where(eq(dataSources.organizationId, scope.org.id)),
    allDestinations(db, scope.org.id),
  ]);
  const refs = [
    ...ps.map((p) => ({ value: p.slug, label: `${p.name} (pipeline)` })),
    ...ds.map((d) => ({ value: d.slug, label: `${d.name} (data source)` })),
    ...dests.map((d) => ({ value: d.slug, label: `${d.name} (alert destination)` })),
  ];
  refs.sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : a.label < b.label ? -1 : 1));
  return {
    sources: notificationSources.map((s) => ({
      source_kind: s.source_kind,
      source_actions: [...s.source_actions],
    })),
    source_refs: refs.map((r) => ({ value: r.value, label: r.label.slice(0, 255) })),
  };
}
