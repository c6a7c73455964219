import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses, errorSchema } from '../../http/openapi';
import { publicRateLimit } from '../../http/rate-limit';
import type { TypedApp } from '../../http/typed-app';
import { dataSourceSchema } from './data-sources.schemas';
import * as s from './oauth.schemas';
import * as svc from './oauth.service';

export function oauthRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Data sources'];
  const item = '/organizations/:organization/data-sources/:data_source';
  const withUnsupported = { ...errorResponses, 422: errorSchema };

  app.post(`${item}/oauth::authorize`, {
    config: access.org('data_sources.write'),
    schema: {
      tags,
      summary: 'Start the OAuth authorization of a hosted git provider source (github, gitlab)',
      operationId: 'authorizeDataSourceOAuth',
      params: s.dataSourceParams,
      body: s.authorizeBody.nullish(),
      response: { 200: s.authorizeResultSchema, ...withUnsupported },
    },
    handler: async (req) =>
      svc.authorize(ctx(req), scopeOf(req), req.params.data_source, req.body ?? undefined),
  });

  app.post(`${item}/oauth::revoke`, {
    config: access.org('data_sources.write'),
    schema: {
      tags,
      summary: 'Revoke the OAuth grant at the provider and forget its tokens (credential becomes revoked)',
      operationId: 'revokeDataSourceOAuth',
      params: s.dataSourceParams,
      response: { 200: dataSourceSchema, ...withUnsupported },
    },
    handler: async (req) => svc.revoke(ctx(req), scopeOf(req), req.params.data_source),
  });

  app.get('/oauth/callback', {
    config: { ...access.public(), ...publicRateLimit(deps.config) },
    schema: {
      tags,
      summary: 'OAuth redirect target (public): completes the authorization started by oauth:authorize',
      operationId: 'oauthCallback',
      querystring: s.callbackQuery,
      response: { 200: s.callbackResultSchema, ...withUnsupported },
    },
    handler: async (req) => svc.callback(ctx(req), req.query),
  });
}
