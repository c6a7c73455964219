import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf, userOf } from '../../http/auth';
import { orgParams, withVerb } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './invitations.schemas';
import * as svc from './invitations.service';

export function invitationsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Invitations'];

  app.get('/organizations/:organization/invitations', {
    config: access.org('members.read'),
    schema: {
      tags,
      summary: 'List invitations, optionally by status',
      params: orgParams,
      querystring: s.listInvitationsQuery,
      response: { 200: s.invitationListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listInvitations(ctx(req), scopeOf(req), req.query);
      return {
        invitations: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post('/organizations/:organization/invitations', {
    config: access.org('members.manage'),
    schema: {
      tags,
      summary: 'Invite an email address with a role (mailed; auto-accepted for an existing member)',
      params: orgParams,
      body: s.createInvitationBody,
      response: { 201: s.invitationSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createInvitation(ctx(req), scopeOf(req), req.body)),
  });

  app.get('/organizations/:organization/invitations/:invitation_slug', {
    config: access.org('members.read'),
    schema: {
      tags,
      summary: 'Get an invitation',
      params: s.invitationParams,
      response: { 200: s.invitationSchema, ...errorResponses },
    },
    handler: async (req) => svc.getInvitation(ctx(req), scopeOf(req), req.params.invitation_slug),
  });

  app.delete('/organizations/:organization/invitations/:invitation_slug', {
    config: access.org('members.manage'),
    schema: {
      tags,
      summary: 'Revoke a pending invitation',
      params: s.invitationParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.revokeInvitation(ctx(req), scopeOf(req), req.params.invitation_slug);
      return reply.status(204).send(null);
    },
  });

  for (const answer of ['accept', 'decline'] as const) {
    app.post(`/invitations/${withVerb('invitation_slug', answer)}`, {
      config: access.user(),
      schema: {
        tags,
        summary:
          answer === 'accept'
            ? 'Accept an invitation (the invitee, with a verified email) and join the organization'
            : 'Decline an invitation (the invitee, with a verified email)',
        params: s.inviteeParams,
        response: { 200: s.invitationSchema, ...errorResponses },
      },
      handler: async (req) =>
        svc.respondToInvitation(ctx(req), userOf(req), req.params.invitation_slug, answer),
    });
  }
}
