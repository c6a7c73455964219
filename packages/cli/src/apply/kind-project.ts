import { call } from '../resource';
import { changedFields, orNull, pick, requireSlugs } from './compare';
import type { ResourceKind } from './types';

const FIELDS = ['name', 'description'];
const item = (org: string, slug: string) => ({ organization: org, project: slug });

/**
 * `kind: Project` with `slug`, `name`, `description` and `environments` (slugs enabled for the
 * project; enabling is additive, an environment left out stays enabled).
 */
export const projectKind: ResourceKind = {
  kind: 'Project',
  order: 30,
  check: (doc) => [
    ...requireSlugs(doc, ['slug']),
    ...(doc.environments !== undefined && !Array.isArray(doc.environments)
      ? ['environments: a list of slugs']
      : []),
  ],
  key: (doc) => String(doc.slug),
  async plan(ctx, doc) {
    const slug = String(doc.slug);
    const have = await orNull(
      call(ctx.client, 'GET', '/organizations/{organization}/projects/{project}', {
        path: item(ctx.org, slug),
      }),
    );
    if (!have) return { action: 'create', changes: [] };
    const changes = changedFields(pick(doc, FIELDS), have.data);
    const envs = (doc.environments as string[] | undefined) ?? [];
    if (envs.length > 0) {
      const enabled = await call<{ environments: { slug: string }[] }>(
        ctx.client,
        'GET',
        '/organizations/{organization}/projects/{project}/environments',
        { path: item(ctx.org, slug), query: { limit: 100 } },
      );
      const on = new Set(enabled.data.environments.map((e) => e.slug));
      changes.push(...envs.filter((e) => !on.has(e)).map((e) => `environments.${e}`));
    }
    return { action: changes.length ? 'update' : 'unchanged', changes };
  },
  async apply(ctx, doc, change) {
    const slug = String(doc.slug);
    const body = { name: doc.name ?? slug, ...pick(doc, ['description']) };
    if (change.action === 'create') {
      await call(ctx.client, 'POST', '/organizations/{organization}/projects', {
        path: { organization: ctx.org },
        body: { ...body, slug },
      });
    } else if (change.changes.some((c) => !c.startsWith('environments.'))) {
      await call(ctx.client, 'PATCH', '/organizations/{organization}/projects/{project}', {
        path: item(ctx.org, slug),
        body: pick(doc, FIELDS),
      });
    }
    // PUT is idempotent: enabling an enabled environment changes nothing.
    for (const env of (doc.environments as string[] | undefined) ?? []) {
      await call(
        ctx.client,
        'PUT',
        '/organizations/{organization}/projects/{project}/environments/{environment}',
        {
          path: { ...item(ctx.org, slug), environment: env },
          body: {},
        },
      );
    }
  },
  async remove(ctx, key) {
    await call(ctx.client, 'DELETE', '/organizations/{organization}/projects/{project}', {
      path: item(ctx.org, key),
    });
  },
};
