import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams, withVerb } from '../../http/fields';
import { errorResponses, errorResponsesFor, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './destinations.schemas';
import * as svc from './destinations.service';

export function destinationsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Alert destinations'];
  const base = '/organizations/:organization/alert-destinations';

  app.get(base, {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: 'List alert destinations',
      params: orgParams,
      querystring: s.listDestinationsQuery,
      response: { 200: s.destinationListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listDestinations(ctx(req), scopeOf(req), req.query);
      return {
        alert_destinations: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post(base, {
    config: access.org('alerts.write'),
    schema: {
      tags,
      summary: 'Create an alert destination',
      params: orgParams,
      body: s.createDestinationBody,
      response: { 201: s.destinationSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createDestination(ctx(req), scopeOf(req), req.body)),
  });

  app.get(`${base}/:alert_destination_slug`, {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: 'Get an alert destination',
      params: s.destinationParams,
      response: { 200: s.destinationSchema, ...errorResponses },
    },
    handler: async (req) => svc.getDestination(ctx(req), scopeOf(req), req.params.alert_destination_slug),
  });

  app.patch(`${base}/:alert_destination_slug`, {
    config: access.org('alerts.write'),
    schema: {
      tags,
      summary: 'Rename, re-address, enable or disable an alert destination',
      params: s.destinationParams,
      body: s.updateDestinationBody,
      response: { 200: s.destinationSchema, ...errorResponses },
    },
    handler: async (req) =>
      svc.updateDestination(ctx(req), scopeOf(req), req.params.alert_destination_slug, req.body),
  });

  app.delete(`${base}/:alert_destination_slug`, {
    config: access.org('alerts.write'),
    schema: {
      tags,
      summary: 'Delete an alert destination (409 while a policy still uses it)',
      params: s.destinationParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteDestination(ctx(req), scopeOf(req), req.params.alert_destination_slug);
      return reply.status(204).send(null);
    },
  });

  app.post(`${base}/${withVerb('alert_destination_slug', 'test')}`, {
    config: access.org('alerts.write'),
    schema: {
      tags,
      summary: 'Send one test message (202; 422 EMAIL_NOT_CONFIGURED without SMTP; no records)',
      params: s.destinationParams,
      response: {
        202: s.destinationTestResultSchema,
        ...errorResponses,
        ...errorResponsesFor('EMAIL_NOT_CONFIGURED'),
      },
    },
    handler: async (req, reply) =>
      reply
        .status(202)
        .send(await svc.testDestination(ctx(req), scopeOf(req), req.params.alert_destination_slug)),
  });
}
