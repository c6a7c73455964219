import type { Deps } from '../../context';
import { access } from '../../http/access';
import { principalOf, scopeOf } from '../../http/auth';
import { orgParams } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './members.schemas';
import * as svc from './members.service';

export function membersRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Members'];

  app.get('/organizations/:organization/members', {
    config: access.org('members.read'),
    schema: {
      tags,
      summary: 'List members',
      params: orgParams,
      querystring: s.listMembersQuery,
      response: { 200: s.memberListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listMembers(ctx(req), scopeOf(req), req.query);
      return {
        members: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.get('/organizations/:organization/members/:user_slug', {
    config: access.org('members.read'),
    schema: {
      tags,
      summary: 'Get a member',
      params: s.memberParams,
      response: { 200: s.memberSchema, ...errorResponses },
    },
    handler: async (req) => svc.getMember(ctx(req), scopeOf(req), req.params.user_slug),
  });

  app.patch('/organizations/:organization/members/:user_slug', {
    config: access.org('members.manage'),
    schema: {
      tags,
      summary: "Change a member's role",
      params: s.memberParams,
      body: s.updateMemberBody,
      response: { 200: s.memberSchema, ...errorResponses },
    },
    handler: async (req) => svc.updateMemberRole(ctx(req), scopeOf(req), req.params.user_slug, req.body.role),
  });

  // Leaving needs no permission beyond membership, so the service checks members.manage itself.
  app.delete('/organizations/:organization/members/:user_slug', {
    config: access.principal(),
    schema: {
      tags,
      summary: 'Remove a member (members.manage), or leave the organization (your own user slug)',
      params: s.memberParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.removeMember(ctx(req), principalOf(req), req.params.organization, req.params.user_slug);
      return reply.status(204).send(null);
    },
  });
}
