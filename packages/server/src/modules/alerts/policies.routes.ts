import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './policies.schemas';
import * as svc from './policies.service';

export function policiesRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Alert policies'];
  const base = '/organizations/:organization/alert-policies';

  app.get(base, {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: 'List alert policies',
      params: orgParams,
      querystring: s.listPoliciesQuery,
      response: { 200: s.policyListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listPolicies(ctx(req), scopeOf(req), req.query);
      return {
        alert_policies: page.items,
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
      summary: 'Create an alert policy (scope rules and destinations are checked: 400)',
      params: orgParams,
      body: s.createPolicyBody,
      response: { 201: s.policySchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createPolicy(ctx(req), scopeOf(req), req.body)),
  });

  app.get(`${base}/source-metadata`, {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: "What policy source filters can select: sources and the organization's resources",
      params: orgParams,
      response: { 200: s.sourceMetadataSchema, ...errorResponses },
    },
    handler: async (req) => svc.sourceMetadata(ctx(req), scopeOf(req)),
  });

  app.get(`${base}/:alert_policy_slug`, {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: 'Get an alert policy',
      params: s.policyParams,
      response: { 200: s.policySchema, ...errorResponses },
    },
    handler: async (req) => svc.getPolicy(ctx(req), scopeOf(req), req.params.alert_policy_slug),
  });

  app.patch(`${base}/:alert_policy_slug`, {
    config: access.org('alerts.write'),
    schema: {
      tags,
      summary: 'Change an alert policy (the scope rules apply to the result)',
      params: s.policyParams,
      body: s.updatePolicyBody,
      response: { 200: s.policySchema, ...errorResponses },
    },
    handler: async (req) => svc.updatePolicy(ctx(req), scopeOf(req), req.params.alert_policy_slug, req.body),
  });

  app.delete(`${base}/:alert_policy_slug`, {
    config: access.org('alerts.write'),
    schema: {
      tags,
      summary: 'Delete an alert policy',
      params: s.policyParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deletePolicy(ctx(req), scopeOf(req), req.params.alert_policy_slug);
      return reply.status(204).send(null);
    },
  });
}
