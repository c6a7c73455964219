import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams, withVerb } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './api-keys.schemas';
import * as svc from './api-keys.service';

export function apiKeysRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['API keys'];

  app.get('/organizations/:organization/api-keys', {
    config: access.org('api_keys.read'),
    schema: {
      tags,
      summary: 'List API keys',
      params: orgParams,
      querystring: s.listApiKeysQuery,
      response: { 200: s.apiKeyListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listKeys(ctx(req), scopeOf(req), req.query);
      return {
        api_keys: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post('/organizations/:organization/api-keys', {
    config: access.org('api_keys.manage'),
    schema: {
      tags,
      summary: 'Create an API key (the raw token is returned once)',
      params: orgParams,
      body: s.createApiKeyBody,
      response: { 201: s.apiKeyWithTokenSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createKey(ctx(req), scopeOf(req), req.body)),
  });

  app.get('/organizations/:organization/api-keys/:api_key_slug', {
    config: access.org('api_keys.read'),
    schema: {
      tags,
      summary: 'Get an API key',
      params: s.apiKeyParams,
      response: { 200: s.apiKeySchema, ...errorResponses },
    },
    handler: async (req) => svc.getKey(ctx(req), scopeOf(req), req.params.api_key_slug),
  });

  app.patch('/organizations/:organization/api-keys/:api_key_slug', {
    config: access.org('api_keys.manage'),
    schema: {
      tags,
      summary: 'Rename or describe an API key',
      params: s.apiKeyParams,
      body: s.updateApiKeyBody,
      response: { 200: s.apiKeySchema, ...errorResponses },
    },
    handler: async (req) => svc.updateKey(ctx(req), scopeOf(req), req.params.api_key_slug, req.body),
  });

  app.delete('/organizations/:organization/api-keys/:api_key_slug', {
    config: access.org('api_keys.manage'),
    schema: {
      tags,
      summary: 'Delete an API key',
      params: s.apiKeyParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteKey(ctx(req), scopeOf(req), req.params.api_key_slug);
      return reply.status(204).send(null);
    },
  });

  app.post(`/organizations/:organization/api-keys/${withVerb('api_key_slug', 'rotate')}`, {
    config: access.org('api_keys.manage'),
    schema: {
      tags,
      summary: 'Rotate an API key: a new token replaces the old one at once',
      params: s.apiKeyParams,
      response: { 200: s.apiKeyWithTokenSchema, ...errorResponses },
    },
    handler: async (req) => svc.rotateKey(ctx(req), scopeOf(req), req.params.api_key_slug),
  });

  app.post(`/organizations/:organization/api-keys/${withVerb('api_key_slug', 'revoke')}`, {
    config: access.org('api_keys.manage'),
    schema: {
      tags,
      summary: 'Revoke an API key',
      params: s.apiKeyParams,
      response: { 200: s.apiKeySchema, ...errorResponses },
    },
    handler: async (req) => svc.revokeKey(ctx(req), scopeOf(req), req.params.api_key_slug),
  });
}
