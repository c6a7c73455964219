import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { confirmationOf } from '../environments/index';
import * as s from './bindings.schemas';
import * as svc from './bindings.service';

export function bindingsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Pipelines'];
  const one = `${s.pe}/pipelines/:pipeline/data-source-bindings/:data_source_ref_slug`;
  const target = (p: {
    project: string;
    environment: string;
    pipeline: string;
    data_source_ref_slug: string;
  }) => ({
    project: p.project,
    environment: p.environment,
    pipeline: p.pipeline,
    ref: p.data_source_ref_slug,
  });

  app.get(`${s.pe}/data-source-bindings`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List the data source bindings of every pipeline of the project in an environment',
      params: s.peParams,
      querystring: s.listBindingsQuery,
      response: { 200: s.bindingListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const { project, environment } = req.params;
      const page = await svc.listBindings(ctx(req), scopeOf(req), project, environment, req.query);
      return {
        data_source_bindings: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.put(one, {
    config: access.org('pipelines.write'),
    schema: {
      tags,
      summary: 'Bind a data source ref to a data source in an environment (201 when new, 200 when replaced)',
      params: s.bindingParams,
      querystring: s.bindingQuery,
      body: s.putBindingBody,
      response: { 200: s.bindingSchema, 201: s.bindingSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const r = await svc.putBinding(
        ctx(req),
        scopeOf(req),
        target(req.params),
        req.body.data_source_slug,
        confirmationOf(
          req.body.protected_environment_confirmation,
          req.query.protected_environment_confirmation,
        ),
      );
      return reply.status(r.created ? 201 : 200).send(r.item);
    },
  });

  app.delete(one, {
    config: access.org('pipelines.write'),
    schema: {
      tags,
      summary: 'Unbind a data source ref in an environment',
      params: s.bindingParams,
      querystring: s.bindingQuery,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteBinding(
        ctx(req),
        scopeOf(req),
        target(req.params),
        req.query.protected_environment_confirmation ?? null,
      );
      return reply.status(204).send(null);
    },
  });
}
