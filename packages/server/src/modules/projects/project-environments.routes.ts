import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { confirmationOf, confirmationQuery } from '../environments/index';
import * as s from './project-environments.schemas';
import * as svc from './project-environments.service';
import { projectParams } from './projects.schemas';

export function projectEnvironmentsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Projects'];
  const base = '/organizations/:organization/projects/:project/environments';

  app.get(base, {
    config: access.org('projects.read'),
    schema: {
      tags,
      summary: 'List the environments enabled for a project',
      params: projectParams,
      querystring: s.listProjectEnvironmentsQuery,
      response: { 200: s.projectEnvironmentListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listProjectEnvironments(ctx(req), scopeOf(req), req.params.project, req.query);
      return {
        environments: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.put(`${base}/:environment`, {
    config: access.org('projects.write'),
    schema: {
      tags,
      summary: 'Enable an environment for a project (201), or change whether it is the default (200)',
      params: s.projectEnvironmentParams,
      querystring: confirmationQuery,
      body: s.enableEnvironmentBody,
      response: { 200: s.projectEnvironmentSchema, 201: s.projectEnvironmentSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const r = await svc.enableEnvironment(
        ctx(req),
        scopeOf(req),
        req.params.project,
        req.params.environment,
        req.body?.is_default ?? false,
        confirmationOf(
          req.body?.protected_environment_confirmation,
          req.query.protected_environment_confirmation,
        ),
      );
      return reply.status(r.created ? 201 : 200).send(r.item);
    },
  });

  app.delete(`${base}/:environment`, {
    config: access.org('projects.write'),
    schema: {
      tags,
      summary: 'Disable an environment for a project',
      params: s.projectEnvironmentParams,
      querystring: confirmationQuery,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.disableEnvironment(
        ctx(req),
        scopeOf(req),
        req.params.project,
        req.params.environment,
        req.query.protected_environment_confirmation ?? null,
      );
      return reply.status(204).send(null);
    },
  });
}
