import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams } from '../../http/fields';
import { errorResponses, errorResponsesFor, errorSchema, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as checks from './data-sources.checks';
import * as s from './data-sources.schemas';
import * as svc from './data-sources.service';

export function dataSourcesRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Data sources'];
  const base = '/organizations/:organization/data-sources';
  const item = `${base}/:data_source`;
  // Connector operations a type does not implement yet answer 422 CONNECTOR_OPERATION_UNSUPPORTED.
  const withUnsupported = { ...errorResponses, 422: errorSchema };

  app.get(base, {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary: 'List data sources',
      params: orgParams,
      querystring: s.listDataSourcesQuery,
      response: { 200: s.dataSourceListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listDataSources(ctx(req), scopeOf(req), req.query);
      return {
        data_sources: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.post(base, {
    config: access.org('data_sources.write'),
    schema: {
      tags,
      summary: 'Create a data source (credentials are write-only)',
      params: orgParams,
      body: s.createDataSourceBody,
      response: { 201: s.dataSourceSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply
        .status(201)
        .send(await svc.createDataSource(ctx(req), scopeOf(req), req.body as s.CreateDataSourceInput)),
  });

  app.get(item, {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary: 'Get a data source (cached schema; never introspects live)',
      params: s.dataSourceParams,
      response: { 200: s.dataSourceSchema, ...errorResponses },
    },
    handler: async (req) => svc.getDataSource(ctx(req), scopeOf(req), req.params.data_source),
  });

  app.patch(item, {
    config: access.org('data_sources.write'),
    schema: {
      tags,
      summary: 'Change a data source (a config change increases connection_revision)',
      params: s.dataSourceParams,
      body: s.updateDataSourceBody,
      response: { 200: s.dataSourceSchema, ...errorResponses },
    },
    handler: async (req) => svc.updateDataSource(ctx(req), scopeOf(req), req.params.data_source, req.body),
  });

  app.delete(item, {
    config: access.org('data_sources.write'),
    schema: {
      tags,
      summary: 'Delete a data source and its credentials',
      params: s.dataSourceParams,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await svc.deleteDataSource(ctx(req), scopeOf(req), req.params.data_source);
      return reply.status(204).send(null);
    },
  });

  app.put(`${item}/credentials`, {
    config: access.org('data_sources.write'),
    schema: {
      tags,
      summary: 'Replace the credentials (the previous ones become rotated)',
      operationId: 'putDataSourceCredentials',
      params: s.dataSourceParams,
      body: s.putCredentialsBody,
      response: { 200: s.dataSourceSchema, ...withUnsupported },
    },
    handler: async (req) =>
      svc.putCredentials(ctx(req), scopeOf(req), req.params.data_source, req.body.credentials),
  });

  app.post(`${item}/test-connection`, {
    config: access.org('data_sources.test'),
    schema: {
      tags,
      summary: 'Test the connection (HTTP: GET to health_path); 200 whether or not it works',
      operationId: 'testDataSourceConnection',
      params: s.dataSourceParams,
      response: { 200: s.testConnectionResultSchema, ...withUnsupported },
    },
    handler: async (req) => checks.testConnection(ctx(req), scopeOf(req), req.params.data_source),
  });

  app.post(`${item}/schema-import`, {
    config: access.org('data_sources.test'),
    schema: {
      tags,
      summary: 'Import (refresh) the schema asynchronously; poll the data source for schema_status',
      operationId: 'importDataSourceSchema',
      params: s.dataSourceParams,
      response: { 202: s.schemaImportResultSchema, ...withUnsupported },
    },
    handler: async (req, reply) =>
      reply
        .status(202)
        .send(await checks.requestSchemaImport(ctx(req), scopeOf(req), req.params.data_source)),
  });

  app.get(`${item}/branches`, {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary: 'List the branches of a git-compatible data source (asks the remote)',
      operationId: 'listDataSourceBranches',
      params: s.dataSourceParams,
      response: {
        200: s.branchListSchema,
        ...withUnsupported,
        ...errorResponsesFor('PRIVATE_HOST_BLOCKED', 'REMOTE_FAILED'),
      },
    },
    handler: async (req) => checks.listBranches(ctx(req), scopeOf(req), req.params.data_source),
  });

  app.get(`${item}/operations`, {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary: 'List the operations of the imported OpenAPI document',
      operationId: 'listDataSourceOperations',
      params: s.dataSourceParams,
      querystring: s.listOperationsQuery,
      response: { 200: s.operationListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await checks.listOperations(ctx(req), scopeOf(req), req.params.data_source, req.query);
      return {
        operations: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });
}
