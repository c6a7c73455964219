import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { withVerb } from '../../http/fields';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { confirmationOf } from '../environments/index';
import { pe, peParams } from './bindings.schemas';
import * as s from './deployments.schemas';
import * as svc from './deployments.service';

export function deploymentsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Pipelines'];

  app.post(`${pe}/pipelines/${withVerb('pipeline', 'deploy')}`, {
    config: access.org('pipelines.deploy'),
    schema: {
      tags,
      summary:
        'Deploy a validated version to an environment (201; 200 when that version is already the active one)',
      params: s.deployParams,
      querystring: s.deployQuery,
      body: s.deployBody,
      response: { 200: s.deploymentSchema, 201: s.deploymentSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const { project, environment, pipeline } = req.params;
      const out = await svc.deploy(
        ctx(req),
        scopeOf(req),
        { project, environment, pipeline },
        req.body.spec_hash,
        confirmationOf(
          req.body.protected_environment_confirmation,
          req.query.protected_environment_confirmation,
        ),
      );
      return reply.status(out.created ? 201 : 200).send(out.deployment);
    },
  });

  app.post(`${pe}/pipelines/${withVerb('pipeline', 'undeploy')}`, {
    config: access.org('pipelines.deploy'),
    schema: {
      tags,
      summary:
        'Undeploy the pipeline from an environment: no more runs there, and the captures of its cdc steps are released',
      params: s.deployParams,
      querystring: s.deployQuery,
      response: { 200: s.deploymentSchema, ...errorResponses },
    },
    handler: async (req) => {
      const { project, environment, pipeline } = req.params;
      return svc.undeploy(
        ctx(req),
        scopeOf(req),
        { project, environment, pipeline },
        confirmationOf(undefined, req.query.protected_environment_confirmation),
      );
    },
  });

  app.get(`${pe}/deployments`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List the deployments of the project in an environment, newest first',
      params: peParams,
      querystring: s.listDeploymentsQuery,
      response: { 200: s.deploymentListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const { project, environment } = req.params;
      const page = await svc.listDeployments(ctx(req), scopeOf(req), project, environment, req.query);
      return {
        deployments: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });
}
