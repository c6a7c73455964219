import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { withVerb } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { confirmationOf, confirmationQuery } from '../environments/index';
import { pipelineParams } from '../runs/index';
import * as ledger from './trigger-ledger';
import * as secrets from './trigger-secrets';
import * as s from './triggers.schemas';
import * as svc from './triggers.service';
import * as w from './webhooks.schemas';

const pe = '/organizations/:organization/projects/:project/environments/:environment';
const base = `${pe}/pipelines/:pipeline/triggers`;

const pageMeta = (p: { has_more: boolean; next_cursor: string | null; prev_cursor: string | null }) => ({
  has_more: p.has_more,
  next_cursor: p.next_cursor,
  prev_cursor: p.prev_cursor,
});

export function triggersRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Triggers'];
  const pes = (p: { project: string; environment: string; pipeline: string }) => ({
    project: p.project,
    environment: p.environment,
    pipeline: p.pipeline,
  });

  app.get(base, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List the triggers of a pipeline in an environment',
      params: pipelineParams,
      querystring: s.listTriggersQuery,
      response: { 200: s.triggerListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const p = await svc.listTriggers(ctx(req), scopeOf(req), pes(req.params), req.query);
      return { pipeline_triggers: p.items, ...pageMeta(p) };
    },
  });

  app.post(base, {
    config: access.org('pipelines.deploy'),
    schema: {
      tags,
      summary:
        'Create a schedule or webhook trigger (201; a webhook answer holds its secret once). ?dry_run=true answers 200 with the next 10 fire times and saves nothing',
      params: pipelineParams,
      querystring: s.dryRunQuery,
      body: s.createTriggerBody,
      response: {
        200: s.previewSchema,
        201: s.triggerWithSecretSchema.or(s.triggerSchema),
        ...errorResponses,
      },
    },
    handler: async (req, reply) => {
      const confirmation = confirmationOf(
        req.body.protected_environment_confirmation,
        req.query.protected_environment_confirmation,
      );
      const r = await svc.createTrigger(
        ctx(req),
        scopeOf(req),
        pes(req.params),
        req.body,
        req.query.dry_run === 'true',
        confirmation,
      );
      if (r.preview) return reply.status(200).send(r.preview);
      return reply.status(201).send(r.trigger);
    },
  });

  app.get(`${base}/:pipeline_trigger_slug`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Get a trigger with its last occurrence and next 5 fire times',
      params: s.triggerParams,
      response: { 200: s.triggerSchema, ...errorResponses },
    },
    handler: async (req) =>
      svc.getTrigger(ctx(req), scopeOf(req), pes(req.params), req.params.pipeline_trigger_slug),
  });

  app.patch(`${base}/:pipeline_trigger_slug`, {
    config: access.org('pipelines.deploy'),
    schema: {
      tags,
      summary:
        'Change a trigger; pause ({"paused": true, "pause_note": …}) or resume ({"paused": false}). ?dry_run=true previews',
      params: s.triggerParams,
      querystring: s.dryRunQuery,
      body: s.updateTriggerBody,
      response: { 200: s.triggerSchema.or(s.previewSchema), ...errorResponses },
    },
    handler: async (req) => {
      const confirmation = confirmationOf(
        req.body.protected_environment_confirmation,
        req.query.protected_environment_confirmation,
      );
      const r = await svc.updateTrigger(
        ctx(req),
        scopeOf(req),
        pes(req.params),
        req.params.pipeline_trigger_slug,
        req.body,
        req.query.dry_run === 'true',
        confirmation,
      );
      return 'preview' in r ? r.preview : r.trigger;
    },
  });

  app.delete(`${base}/:pipeline_trigger_slug`, {
    config: access.org('pipelines.deploy'),
    schema: {
      tags,
      summary: 'Delete a trigger with its ledger and deliveries (runs it started stay)',
      params: s.triggerParams,
      querystring: confirmationQuery,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteTrigger(
        ctx(req),
        scopeOf(req),
        pes(req.params),
        req.params.pipeline_trigger_slug,
        req.query.protected_environment_confirmation ?? null,
      );
      return reply.status(204).send(null);
    },
  });

  app.post(`${base}/${withVerb('pipeline_trigger_slug', 'rotate-secret')}`, {
    config: access.org('pipelines.deploy'),
    schema: {
      tags,
      summary:
        'Rotate the signing secret of a webhook trigger: the new secret is shown once; the previous one keeps verifying for previous_valid_for_seconds',
      params: s.triggerParams,
      querystring: confirmationQuery,
      body: s.rotateSecretBody,
      response: { 200: s.triggerWithSecretSchema, ...errorResponses },
    },
    handler: async (req) =>
      secrets.rotateSecret(
        ctx(req),
        scopeOf(req),
        pes(req.params),
        req.params.pipeline_trigger_slug,
        req.body?.previous_valid_for_seconds ?? 86400,
        confirmationOf(
          req.body?.protected_environment_confirmation,
          req.query.protected_environment_confirmation,
        ),
      ),
  });

  app.get(`${base}/:pipeline_trigger_slug/occurrences`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'The occurrence ledger of a schedule: every start and every skip with its reason',
      params: s.triggerParams,
      querystring: s.listOccurrencesQuery,
      response: { 200: s.occurrenceListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const p = await ledger.listOccurrences(
        ctx(req),
        scopeOf(req),
        pes(req.params),
        req.params.pipeline_trigger_slug,
        req.query,
      );
      return { occurrences: p.items, ...pageMeta(p) };
    },
  });

  app.get(`${base}/:pipeline_trigger_slug/deliveries`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Accepted deliveries of a webhook trigger (refusals are in the security-audit events)',
      params: s.triggerParams,
      querystring: w.listDeliveriesQuery,
      response: { 200: w.deliveryListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const p = await ledger.listDeliveries(
        ctx(req),
        scopeOf(req),
        pes(req.params),
        req.params.pipeline_trigger_slug,
        req.query,
      );
      return { deliveries: p.items, ...pageMeta(p) };
    },
  });
}
