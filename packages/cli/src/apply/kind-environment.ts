import { call } from '../resource';
import { changedFields, orNull, pick, requireSlugs } from './compare';
import type { ResourceKind } from './types';

const FIELDS = ['name', 'description', 'color', 'protected', 'run_timeout_seconds'];
const item = (org: string, slug: string) => ({ organization: org, environment: slug });

/** `kind: Environment` with `slug`, `name`, `description`, `color`, `protected`, `run_timeout_seconds`. */
export const environmentKind: ResourceKind = {
  kind: 'Environment',
  order: 20,
  check: (doc) => requireSlugs(doc, ['slug']),
  key: (doc) => String(doc.slug),
  async plan(ctx, doc) {
    const have = await orNull(
      call(ctx.client, 'GET', '/organizations/{organization}/environments/{environment}', {
        path: item(ctx.org, String(doc.slug)),
      }),
    );
    if (!have) return { action: 'create', changes: [] };
    const changes = changedFields(pick(doc, FIELDS), have.data);
    return { action: changes.length ? 'update' : 'unchanged', changes };
  },
  async apply(ctx, doc, change) {
    const slug = String(doc.slug);
    if (change.action === 'create') {
      await call(ctx.client, 'POST', '/organizations/{organization}/environments', {
        path: { organization: ctx.org },
        body: { name: slug, ...pick(doc, FIELDS), slug },
      });
      return;
    }
    await call(ctx.client, 'PATCH', '/organizations/{organization}/environments/{environment}', {
      path: item(ctx.org, slug),
      // Changing a protected environment needs its slug again; the file naming it is that consent.
      body: { ...pick(doc, FIELDS), protected_environment_confirmation: slug },
    });
  },
  async remove(ctx, key) {
    await call(ctx.client, 'DELETE', '/organizations/{organization}/environments/{environment}', {
      path: item(ctx.org, key),
      query: { delete_reason: 'pruned by sluice apply', protected_environment_confirmation: key },
    });
  },
};
