import type { Deps } from '../../context';
import { access } from '../../http/access';
import { principalOf, scopeOf, userOf } from '../../http/auth';
import { orgParams } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './organizations.schemas';
import * as svc from './organizations.service';

export function organizationsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Organizations'];

  app.get('/organizations', {
    config: access.principal(),
    schema: {
      tags,
      summary: 'List organizations: a user sees those it belongs to, an API key its own',
      querystring: s.listOrganizationsQuery,
      response: { 200: s.organizationListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listOrganizations(ctx(req), principalOf(req), req.query);
      return {
        organizations: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post('/organizations', {
    config: access.user(),
    schema: {
      tags,
      summary: 'Create an organization on a 14-day trial; the caller becomes its owner',
      body: s.createOrganizationBody,
      response: { 201: s.organizationSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createOrganization(ctx(req), userOf(req), req.body)),
  });

  app.get('/organizations/:organization', {
    config: access.org('organizations.read'),
    schema: {
      tags,
      summary: 'Get a workspace with its plan or trial',
      params: orgParams,
      response: { 200: s.organizationSchema, ...errorResponses },
    },
    handler: async (req) => svc.getOrganization(ctx(req), scopeOf(req)),
  });

  app.patch('/organizations/:organization', {
    config: access.org('organizations.write'),
    schema: {
      tags,
      summary: 'Rename an organization or change its event retention',
      params: orgParams,
      body: s.updateOrganizationBody,
      response: { 200: s.organizationSchema, ...errorResponses },
    },
    handler: async (req) => svc.updateOrganization(ctx(req), scopeOf(req), req.body),
  });

  app.delete('/organizations/:organization', {
    config: access.org('organizations.delete'),
    schema: {
      tags,
      summary: 'Delete an organization and everything it owns',
      params: orgParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteOrganization(ctx(req), scopeOf(req));
      return reply.status(204).send(null);
    },
  });
}
