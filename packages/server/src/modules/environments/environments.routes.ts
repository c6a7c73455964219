import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams, withVerb } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './environments.schemas';
import * as svc from './environments.service';
import { confirmationOf, confirmationQuery } from './protected';

export function environmentsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Environments'];
  const base = '/organizations/:organization/environments';

  app.get(base, {
    config: access.org('environments.read'),
    schema: {
      tags,
      summary: 'List environments (soft-deleted ones only with include_deleted=true)',
      params: orgParams,
      querystring: s.listEnvironmentsQuery,
      response: { 200: s.environmentListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listEnvironments(ctx(req), scopeOf(req), req.query);
      return {
        environments: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post(base, {
    config: access.org('environments.write'),
    schema: {
      tags,
      summary: 'Create an environment',
      params: orgParams,
      body: s.createEnvironmentBody,
      response: { 201: s.environmentSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createEnvironment(ctx(req), scopeOf(req), req.body)),
  });

  app.get(`${base}/:environment`, {
    config: access.org('environments.read'),
    schema: {
      tags,
      summary: 'Get an environment (soft-deleted ones too)',
      params: s.environmentParams,
      response: { 200: s.environmentSchema, ...errorResponses },
    },
    handler: async (req) => svc.getEnvironment(ctx(req), scopeOf(req), req.params.environment),
  });

  app.patch(`${base}/:environment`, {
    config: access.org('environments.write'),
    schema: {
      tags,
      summary: 'Change an environment; unprotecting a protected one needs the confirmation',
      params: s.environmentParams,
      querystring: confirmationQuery,
      body: s.updateEnvironmentBody,
      response: { 200: s.environmentSchema, ...errorResponses },
    },
    handler: async (req) =>
      svc.updateEnvironment(
        ctx(req),
        scopeOf(req),
        req.params.environment,
        req.body,
        confirmationOf(
          req.body.protected_environment_confirmation,
          req.query.protected_environment_confirmation,
        ),
      ),
  });

  app.delete(`${base}/:environment`, {
    config: access.org('environments.write'),
    schema: {
      tags,
      summary: 'Soft-delete an environment with an optional delete_reason (query or body)',
      params: s.environmentParams,
      querystring: s.deleteEnvironmentQuery,
      body: s.deleteEnvironmentBody,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteEnvironment(
        ctx(req),
        scopeOf(req),
        req.params.environment,
        req.body?.delete_reason ?? req.query.delete_reason ?? null,
        confirmationOf(
          req.body?.protected_environment_confirmation,
          req.query.protected_environment_confirmation,
        ),
      );
      return reply.status(204).send(null);
    },
  });

  app.post(`${base}/${withVerb('environment', 'restore')}`, {
    config: access.org('environments.write'),
    schema: {
      tags,
      summary: 'Restore a soft-deleted environment',
      params: s.environmentParams,
      response: { 200: s.environmentSchema, ...errorResponses },
    },
    handler: async (req) => svc.restoreEnvironment(ctx(req), scopeOf(req), req.params.environment),
  });

  app.post(`${base}/${withVerb('environment', 'purge')}`, {
    config: access.org('environments.write'),
    schema: {
      tags,
      summary: 'Permanently delete a soft-deleted environment with its secrets and variables',
      params: s.environmentParams,
      querystring: confirmationQuery,
      body: s.purgeEnvironmentBody,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.purgeEnvironment(
        ctx(req),
        scopeOf(req),
        req.params.environment,
        confirmationOf(
          req.body?.protected_environment_confirmation,
          req.query.protected_environment_confirmation,
        ),
      );
      return reply.status(204).send(null);
    },
  });
}
