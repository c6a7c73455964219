import type { Deps } from '../../context';
import { access } from '../../http/access';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { meOf } from './me';
import * as s from './pats.schemas';
import * as svc from './pats.service';

export function patsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Personal access tokens'];
  const base = '/users/me/personal-access-tokens';

  app.get(base, {
    config: access.user(),
    schema: {
      tags,
      summary: 'List your personal access tokens',
      querystring: s.listPatsQuery,
      response: { 200: s.patListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listPats(ctx(req), meOf(req), req.query);
      return {
        personal_access_tokens: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post(base, {
    config: access.user(),
    schema: {
      tags,
      summary: 'Create a personal access token (the raw token is returned once)',
      body: s.createPatBody,
      response: { 201: s.patWithTokenSchema, ...errorResponses },
    },
    handler: async (req, reply) => reply.status(201).send(await svc.createPat(ctx(req), meOf(req), req.body)),
  });

  app.get(`${base}/:pat_slug`, {
    config: access.user(),
    schema: {
      tags,
      summary: 'Get one of your personal access tokens',
      params: s.patParams,
      response: { 200: s.patSchema, ...errorResponses },
    },
    handler: async (req) => svc.getPat(ctx(req), meOf(req), req.params.pat_slug),
  });

  app.patch(`${base}/:pat_slug`, {
    config: access.user(),
    schema: {
      tags,
      summary: 'Rename a personal access token',
      params: s.patParams,
      body: s.updatePatBody,
      response: { 200: s.patSchema, ...errorResponses },
    },
    handler: async (req) => svc.updatePat(ctx(req), meOf(req), req.params.pat_slug, req.body),
  });

  app.delete(`${base}/:pat_slug`, {
    config: access.user(),
    schema: {
      tags,
      summary: 'Revoke and delete a personal access token (it stops working at once)',
      params: s.patParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deletePat(ctx(req), meOf(req), req.params.pat_slug);
      return reply.status(204).send(null);
    },
  });
}
