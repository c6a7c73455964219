import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './events.schemas';
import * as svc from './events.service';

export function eventsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Events'];

  app.get('/organizations/:organization/events', {
    config: access.org('events.read'),
    schema: {
      tags,
      summary: 'List activity events',
      description: 'Every successful change in the organization, newest first by default.',
      params: s.eventParams,
      querystring: s.listEventsQuery,
      response: { 200: s.eventListSchema, ...errorResponses },
    },
    handler: async (req) => svc.listEvents(ctx(req), scopeOf(req), 'activity', req.query),
  });

  app.get('/organizations/:organization/security-audit-events', {
    config: access.org('security_audit.read'),
    schema: {
      tags,
      summary: 'List security-audit events',
      description:
        'Sign-ins, token and key changes, role and membership changes, secret writes and permission denials.',
      params: s.eventParams,
      querystring: s.listEventsQuery,
      response: { 200: s.eventListSchema, ...errorResponses },
    },
    handler: async (req) => svc.listEvents(ctx(req), scopeOf(req), 'security_audit', req.query),
  });
}
