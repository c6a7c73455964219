import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './pipelines.schemas';
import * as svc from './pipelines.service';

export function pipelinesRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Pipelines'];
  const base = '/organizations/:organization/projects/:project/pipelines';

  app.get(base, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List the pipelines of a project',
      params: s.pipelinesParams,
      querystring: s.listPipelinesQuery,
      response: { 200: s.pipelineListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listPipelines(ctx(req), scopeOf(req), req.params.project, req.query);
      return {
        pipelines: page.items,
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
      summary: 'Create a pipeline (push its spec as a version afterwards)',
      params: s.pipelinesParams,
      body: s.createPipelineBody,
      response: { 201: s.pipelineSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createPipeline(ctx(req), scopeOf(req), req.params.project, req.body)),
  });

  app.get(`${base}/:pipeline`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Get a pipeline',
      params: s.pipelineParams,
      response: { 200: s.pipelineSchema, ...errorResponses },
    },
    handler: async (req) => svc.getPipeline(ctx(req), scopeOf(req), req.params.project, req.params.pipeline),
  });

  app.patch(`${base}/:pipeline`, {
    config: access.org('pipelines.write'),
    schema: {
      tags,
      summary: 'Rename or describe a pipeline',
      params: s.pipelineParams,
      body: s.updatePipelineBody,
      response: { 200: s.pipelineSchema, ...errorResponses },
    },
    handler: async (req) =>
      svc.updatePipeline(ctx(req), scopeOf(req), req.params.project, req.params.pipeline, req.body),
  });

  app.delete(`${base}/:pipeline`, {
    config: access.org('pipelines.write'),
    schema: {
      tags,
      summary: 'Delete a pipeline with its versions, bindings, deployments and finished runs',
      params: s.pipelineParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deletePipeline(ctx(req), scopeOf(req), req.params.project, req.params.pipeline);
      return reply.status(204).send(null);
    },
  });
}
