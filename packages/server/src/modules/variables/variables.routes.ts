import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { confirmationOf, confirmationQuery, environmentParams } from '../environments/index';

import * as s from './variables.schemas';
import * as svc from './variables.service';

export function variablesRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Runtime variables'];
  const base = '/organizations/:organization/environments/:environment/variables';

  app.get(base, {
    config: access.org('variables.read'),
    schema: {
      tags,
      summary: 'List the runtime variables of an environment',
      params: environmentParams,
      querystring: s.listVariablesQuery,
      response: { 200: s.variableListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listVariables(ctx(req), scopeOf(req), req.params.environment, req.query);
      return {
        runtime_variables: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.get(`${base}/:runtime_variable_key`, {
    config: access.org('variables.read'),
    schema: {
      tags,
      summary: 'Get a runtime variable',
      params: s.variableParams,
      response: { 200: s.runtimeVariableSchema, ...errorResponses },
    },
    handler: async (req) =>
      svc.getVariable(ctx(req), scopeOf(req), req.params.environment, req.params.runtime_variable_key),
  });

  app.put(`${base}/:runtime_variable_key`, {
    config: access.org('variables.write'),
    schema: {
      tags,
      summary: 'Create (201) or replace (200) a runtime variable',
      params: s.variableParams,
      querystring: confirmationQuery,
      body: s.putVariableBody,
      response: { 200: s.runtimeVariableSchema, 201: s.runtimeVariableSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const r = await svc.putVariable(
        ctx(req),
        scopeOf(req),
        req.params.environment,
        req.params.runtime_variable_key,
        req.body,
        confirmationOf(
          req.body.protected_environment_confirmation,
          req.query.protected_environment_confirmation,
        ),
      );
      return reply.status(r.created ? 201 : 200).send(r.item);
    },
  });

  app.delete(`${base}/:runtime_variable_key`, {
    config: access.org('variables.write'),
    schema: {
      tags,
      summary: 'Delete a runtime variable',
      params: s.variableParams,
      querystring: confirmationQuery,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteVariable(
        ctx(req),
        scopeOf(req),
        req.params.environment,
        req.params.runtime_variable_key,
        req.query.protected_environment_confirmation ?? null,
      );
      return reply.status(204).send(null);
    },
  });
}
