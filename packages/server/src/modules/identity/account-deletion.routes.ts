import type { Deps } from '../../context';
import { access } from '../../http/access';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './account-deletion.schemas';
import * as svc from './account-deletion.service';
import { meOf } from './me';

export function accountDeletionRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Users'];

  app.post('/users/me/deletion-request', {
    config: access.user(),
    schema: {
      tags,
      summary: 'Delete your account (at once when no organization blocks it)',
      description:
        'Answers with the request: `completed` when the account was deleted, otherwise `ownership_required` or `pending` with the organizations to resolve first; nothing is deleted then, and confirming again re-evaluates that open request. 201 for a new request, 200 when an open one was re-evaluated.',
      body: s.deletionRequestBody,
      response: { 200: s.deletionRequestSchema, 201: s.deletionRequestSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const { row, created } = await svc.requestDeletion(ctx(req), meOf(req));
      return reply.status(created ? 201 : 200).send(svc.toRequest(row));
    },
  });

  app.get('/users/me/deletion-request', {
    config: access.user(),
    schema: {
      tags,
      summary: 'Your latest account deletion request (404 when there is none)',
      response: { 200: s.deletionRequestSchema, ...errorResponses },
    },
    handler: async (req) => svc.getDeletionRequest(ctx(req), meOf(req)),
  });
}
