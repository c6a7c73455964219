import { call } from '../resource';
import { orNull, requireSlugs } from './compare';
import type { ResourceKind } from './types';

type Binding = { data_source_ref_slug: string; data_source_slug: string };
const BINDING =
  '/organizations/{organization}/projects/{project}/environments/{environment}/pipelines/{pipeline}/data-source-bindings/{data_source_ref_slug}';

/** `kind: Binding` with `project`, `environment`, `pipeline`, `ref`, `data_source`. */
export const bindingKind: ResourceKind = {
  kind: 'Binding',
  order: 50,
  check: (doc) => requireSlugs(doc, ['project', 'environment', 'pipeline', 'ref', 'data_source']),
  key: (doc) => `${doc.project}/${doc.environment}/${doc.pipeline}/${doc.ref}`,
  async plan(ctx, doc) {
    const list = await orNull(
      call<{ data_source_bindings: Binding[] }>(
        ctx.client,
        'GET',
        '/organizations/{organization}/projects/{project}/environments/{environment}/data-source-bindings',
        {
          path: { organization: ctx.org, project: String(doc.project), environment: String(doc.environment) },
          query: { pipeline_slug: doc.pipeline, limit: 100 },
        },
      ),
    );
    const have = list?.data.data_source_bindings.find((b) => b.data_source_ref_slug === doc.ref);
    if (!have) return { action: 'create', changes: [] };
    return have.data_source_slug === doc.data_source
      ? { action: 'unchanged', changes: [] }
      : { action: 'update', changes: ['data_source'] };
  },
  async apply(ctx, doc) {
    await call(ctx.client, 'PUT', BINDING, {
      path: {
        organization: ctx.org,
        project: String(doc.project),
        environment: String(doc.environment),
        pipeline: String(doc.pipeline),
        data_source_ref_slug: String(doc.ref),
      },
      body: { data_source_slug: doc.data_source, protected_environment_confirmation: doc.environment },
    });
  },
  async remove(ctx, key) {
    const [project, environment, pipeline, ref] = key.split('/');
    await call(ctx.client, 'DELETE', BINDING, {
      path: { organization: ctx.org, project, environment, pipeline, data_source_ref_slug: ref },
      query: { protected_environment_confirmation: environment },
    });
  },
};
