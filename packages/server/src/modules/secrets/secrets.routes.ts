import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { confirmationOf, confirmationQuery, environmentParams } from '../environments/index';

import * as s from './secrets.schemas';
import * as svc from './secrets.service';

export function secretsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Environment secrets'];
  const base = '/organizations/:organization/environments/:environment/secrets';

  app.get(base, {
    config: access.org('secrets.read'),
    schema: {
      tags,
      summary: 'List the secrets of an environment (keys and metadata; never values)',
      params: environmentParams,
      querystring: s.listSecretsQuery,
      response: { 200: s.secretListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listSecrets(ctx(req), scopeOf(req), req.params.environment, req.query);
      return {
        environment_secrets: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.put(`${base}/:environment_secret_key`, {
    config: access.org('secrets.write'),
    schema: {
      tags,
      summary:
        'Create (201) or replace (200) a secret (write-only; the value is encrypted and never returned)',
      params: s.secretParams,
      querystring: confirmationQuery,
      body: s.putSecretBody,
      response: { 200: s.environmentSecretSchema, 201: s.environmentSecretSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const r = await svc.putSecret(
        ctx(req),
        scopeOf(req),
        req.params.environment,
        req.params.environment_secret_key,
        req.body,
        confirmationOf(
          req.body.protected_environment_confirmation,
          req.query.protected_environment_confirmation,
        ),
      );
      return reply.status(r.created ? 201 : 200).send(r.item);
    },
  });

  app.delete(`${base}/:environment_secret_key`, {
    config: access.org('secrets.write'),
    schema: {
      tags,
      summary: 'Delete a secret',
      params: s.secretParams,
      querystring: confirmationQuery,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteSecret(
        ctx(req),
        scopeOf(req),
        req.params.environment,
        req.params.environment_secret_key,
        req.query.protected_environment_confirmation ?? null,
      );
      return reply.status(204).send(null);
    },
  });
}
