import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './refs.schemas';
import * as svc from './refs.service';

export function refsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Pipelines'];
  const base = '/organizations/:organization/projects/:project/pipelines/:pipeline/data-source-refs';

  app.get(base, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List the data source refs of a pipeline (derived from its pushed versions)',
      params: s.refsParams,
      querystring: s.listRefsQuery,
      response: { 200: s.refListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const { project, pipeline } = req.params;
      const page = await svc.listRefs(ctx(req), scopeOf(req), project, pipeline, req.query);
      return {
        data_source_refs: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.get(`${base}/:data_source_ref_slug`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Get a data source ref',
      params: s.refParams,
      response: { 200: s.refSchema, ...errorResponses },
    },
    handler: async (req) => {
      const { project, pipeline, data_source_ref_slug } = req.params;
      return svc.getRef(ctx(req), scopeOf(req), project, pipeline, data_source_ref_slug);
    },
  });
}
