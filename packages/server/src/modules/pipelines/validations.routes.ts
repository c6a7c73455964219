import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { pe, peParams } from './bindings.schemas';
import type { SpecCheck } from './validations.checks';
import * as s from './validations.schemas';
import * as svc from './validations.service';

/** `moreChecks`: the checks other modules add to validation (modules/registry.ts wires them). */
export function validationsRoutes(app: TypedApp, deps: Deps, moreChecks: readonly SpecCheck[]) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Pipelines'];

  app.post(`${pe}/pipeline-validation`, {
    config: access.org('pipelines.write'),
    schema: {
      tags,
      summary:
        'Validate a pushed version or a draft spec against an environment (stored as a validation record)',
      params: peParams,
      body: s.validateBody,
      response: { 201: s.validationSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const { project, environment } = req.params;
      return reply
        .status(201)
        .send(await svc.validate(ctx(req), scopeOf(req), project, environment, req.body, moreChecks));
    },
  });

  app.get(`${pe}/pipeline-validations/:validation_slug`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Get a validation record',
      params: s.validationParams,
      response: { 200: s.validationSchema, ...errorResponses },
    },
    handler: async (req) => {
      const { project, environment, validation_slug } = req.params;
      return svc.getValidation(ctx(req), scopeOf(req), project, environment, validation_slug);
    },
  });
}
