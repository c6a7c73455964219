import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './roles.schemas';
import * as svc from './roles.service';

export function rolesRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Roles'];

  app.get('/permissions', {
    config: access.principal(),
    schema: {
      tags,
      summary: 'List the permission names custom roles can hold',
      response: { 200: s.permissionListSchema, ...errorResponses },
    },
    handler: async () => svc.listPermissions(),
  });

  app.get('/organizations/:organization/roles', {
    config: access.org('roles.read'),
    schema: {
      tags,
      summary: 'List roles, built-in and custom',
      params: orgParams,
      querystring: s.listRolesQuery,
      response: { 200: s.roleListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listRoles(ctx(req), scopeOf(req), req.query);
      return {
        roles: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post('/organizations/:organization/roles', {
    config: access.org('roles.manage'),
    schema: {
      tags,
      summary: 'Create a custom role',
      params: orgParams,
      body: s.createRoleBody,
      response: { 201: s.roleSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createRole(ctx(req), scopeOf(req), req.body)),
  });

  app.get('/organizations/:organization/roles/:role_slug', {
    config: access.org('roles.read'),
    schema: {
      tags,
      summary: 'Get a role',
      params: s.roleParams,
      response: { 200: s.roleSchema, ...errorResponses },
    },
    handler: async (req) => svc.getRole(ctx(req), scopeOf(req), req.params.role_slug),
  });

  app.patch('/organizations/:organization/roles/:role_slug', {
    config: access.org('roles.manage'),
    schema: {
      tags,
      summary: 'Change a custom role (built-in roles cannot be changed)',
      params: s.roleParams,
      body: s.updateRoleBody,
      response: { 200: s.roleSchema, ...errorResponses },
    },
    handler: async (req) => svc.updateRole(ctx(req), scopeOf(req), req.params.role_slug, req.body),
  });

  app.delete('/organizations/:organization/roles/:role_slug', {
    config: access.org('roles.manage'),
    schema: {
      tags,
      summary: 'Delete a custom role no member, pending invitation or API key uses',
      params: s.roleParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteRole(ctx(req), scopeOf(req), req.params.role_slug);
      return reply.status(204).send(null);
    },
  });
}
