import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams } from '../../http/fields';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { meOf } from '../identity/index';
import * as s from './billing.schemas';
import * as svc from './billing.service';

export function billingRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Billing'];
  const put = { 200: s.billingProfileSchema, 201: s.billingProfileSchema, ...errorResponses };

  app.get('/users/me/billing-profile', {
    config: access.user(),
    schema: {
      tags,
      summary: 'Your billing profile (404 until the first PUT)',
      response: { 200: s.billingProfileSchema, ...errorResponses },
    },
    handler: async (req) => svc.getUserProfile(ctx(req), meOf(req)),
  });

  app.put('/users/me/billing-profile', {
    config: access.user(),
    schema: {
      tags,
      summary: 'Create or replace your billing profile',
      description: '201 when the profile was created, 200 when it was replaced.',
      body: s.putBillingProfileBody,
      response: put,
    },
    handler: async (req, reply) => {
      const { profile, created } = await svc.putUserProfile(ctx(req), meOf(req), req.body);
      return reply.status(created ? 201 : 200).send(profile);
    },
  });

  app.get('/organizations/:organization/billing-profile', {
    config: access.org('billing.read'),
    schema: {
      tags,
      summary: "The organization's billing profile (404 until the first PUT)",
      params: orgParams,
      response: { 200: s.billingProfileSchema, ...errorResponses },
    },
    handler: async (req) => svc.getOrgProfile(ctx(req), scopeOf(req)),
  });

  app.put('/organizations/:organization/billing-profile', {
    config: access.org('billing.write'),
    schema: {
      tags,
      summary: "Create or replace the organization's billing profile",
      description: '201 when the profile was created, 200 when it was replaced.',
      params: orgParams,
      body: s.putBillingProfileBody,
      response: put,
    },
    handler: async (req, reply) => {
      const { profile, created } = await svc.putOrgProfile(ctx(req), scopeOf(req), req.body);
      return reply.status(created ? 201 : 200).send(profile);
    },
  });
}
