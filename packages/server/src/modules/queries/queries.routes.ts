import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams, withVerb } from '../../http/fields';
import { errorResponses, errorSchema, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './queries.schemas';
import * as svc from './queries.service';
import * as exec from './query-executions.service';

export function queriesRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Queries'];
  const withUnsupported = { ...errorResponses, 422: errorSchema };

  app.get('/organizations/:organization/queries', {
    config: access.org('queries.read'),
    schema: {
      tags,
      summary: 'List saved queries',
      params: orgParams,
      querystring: s.listQueriesQuery,
      response: { 200: s.queryListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listQueries(ctx(req), scopeOf(req), req.query);
      return {
        queries: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post('/organizations/:organization/queries', {
    config: access.org('queries.write'),
    schema: {
      tags,
      summary: 'Save a query (the statement is checked against the data source type)',
      params: orgParams,
      body: s.createQueryBody,
      response: { 201: s.querySchema, ...withUnsupported },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createQuery(ctx(req), scopeOf(req), req.body)),
  });

  app.get('/organizations/:organization/queries/:query_slug', {
    config: access.org('queries.read'),
    schema: {
      tags,
      summary: 'Get a saved query',
      params: s.queryParams,
      response: { 200: s.querySchema, ...errorResponses },
    },
    handler: async (req) => svc.getQuery(ctx(req), scopeOf(req), req.params.query_slug),
  });

  app.patch('/organizations/:organization/queries/:query_slug', {
    config: access.org('queries.write'),
    schema: {
      tags,
      summary: 'Change a saved query',
      params: s.queryParams,
      body: s.updateQueryBody,
      response: { 200: s.querySchema, ...withUnsupported },
    },
    handler: async (req) => svc.updateQuery(ctx(req), scopeOf(req), req.params.query_slug, req.body),
  });

  app.delete('/organizations/:organization/queries/:query_slug', {
    config: access.org('queries.write'),
    schema: {
      tags,
      summary: 'Delete a saved query and its executions',
      params: s.queryParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteQuery(ctx(req), scopeOf(req), req.params.query_slug);
      return reply.status(204).send(null);
    },
  });

  app.post(`/organizations/:organization/queries/${withVerb('query_slug', 'execute')}`, {
    config: access.org('queries.execute'),
    schema: {
      tags,
      summary: 'Execute a saved query now with parameters (a failed execution is answered and stored too)',
      params: s.queryParams,
      body: s.executeQueryBody,
      response: { 200: s.executionSchema, ...withUnsupported },
    },
    handler: async (req) =>
      exec.executeQuery(ctx(req), scopeOf(req), req.params.query_slug, req.body.parameters),
  });

  app.get('/organizations/:organization/queries/:query_slug/executions', {
    config: access.org('queries.read'),
    schema: {
      tags,
      summary: 'List executions of a saved query',
      params: s.queryParams,
      querystring: s.listExecutionsQuery,
      response: { 200: s.executionListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await exec.listExecutions(ctx(req), scopeOf(req), req.params.query_slug, req.query);
      return {
        query_executions: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.get('/organizations/:organization/query-executions/:execution_slug', {
    config: access.org('queries.read'),
    schema: {
      tags,
      summary: 'Get a query execution',
      params: s.executionParams,
      response: { 200: s.executionSchema, ...errorResponses },
    },
    handler: async (req) => exec.getExecution(ctx(req), scopeOf(req), req.params.execution_slug),
  });
}
