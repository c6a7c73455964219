import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { pipelineParams } from './pipelines.schemas';
import * as s from './versions.schemas';
import * as svc from './versions.service';

export function versionsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Pipelines'];
  const base = '/organizations/:organization/projects/:project/pipelines/:pipeline/versions';

  app.get(base, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List the versions of a pipeline',
      params: pipelineParams,
      querystring: s.listVersionsQuery,
      response: { 200: s.versionListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const { project, pipeline } = req.params;
      const page = await svc.listVersions(ctx(req), scopeOf(req), project, pipeline, req.query);
      return {
        versions: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post(base, {
    config: access.org('pipelines.write'),
    schema: {
      tags,
      summary: 'Push a spec as a version (201 new; 200 with the existing version for an identical spec)',
      params: pipelineParams,
      body: s.pushVersionBody,
      response: { 200: s.versionSchema, 201: s.versionSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const { project, pipeline } = req.params;
      const out = await svc.pushVersion(ctx(req), scopeOf(req), project, pipeline, req.body.spec);
      return reply.status(out.created ? 201 : 200).send(out.version);
    },
  });

  app.get(`${base}/:spec_hash`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Get a version by its spec hash or a unique prefix (7+ characters)',
      params: s.versionParams,
      response: { 200: s.versionSchema, ...errorResponses },
    },
    handler: async (req) => {
      const { project, pipeline, spec_hash } = req.params;
      return svc.getVersion(ctx(req), scopeOf(req), project, pipeline, spec_hash);
    },
  });
}
