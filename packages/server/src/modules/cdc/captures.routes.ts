import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses, errorResponsesFor, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './captures.schemas';
import * as svc from './captures.service';

// Capture status and orphan cleanup (docs/cdc.md "Slot safety").

const pageMeta = (p: { has_more: boolean; next_cursor: string | null; prev_cursor: string | null }) => ({
  has_more: p.has_more,
  next_cursor: p.next_cursor,
  prev_cursor: p.prev_cursor,
});

export function capturesRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const remote = {
    ...errorResponses,
    ...errorResponsesFor('CONNECTOR_OPERATION_UNSUPPORTED', 'PRIVATE_HOST_BLOCKED', 'REMOTE_FAILED'),
  };
  const dataSourceCaptures = '/organizations/:organization/data-sources/:data_source/captures';

  app.get('/organizations/:organization/projects/:project/pipelines/:pipeline/captures', {
    config: access.org('pipelines.read'),
    schema: {
      tags: ['Pipelines'],
      summary:
        'The change data captures of the deployed pipeline: per cdc source step and environment, its lag, last confirmed position and last checkpoint (asks the sources)',
      operationId: 'listPipelineCaptures',
      params: s.pipelineCapturesParams,
      querystring: s.listPipelineCapturesQuery,
      response: { 200: s.pipelineCaptureListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const { project, pipeline } = req.params;
      const page = await svc.listPipelineCaptures(ctx(req), scopeOf(req), { project, pipeline }, req.query);
      return { captures: page.items, ...pageMeta(page) };
    },
  });

  app.get(dataSourceCaptures, {
    config: access.org('data_sources.read'),
    schema: {
      tags: ['Data sources'],
      summary:
        'List the Sluice change data captures on the data source (asks the remote); orphans have no deployed owner',
      operationId: 'listDataSourceCaptures',
      params: s.dataSourceCaptureParams.omit({ capture: true }),
      querystring: s.listDataSourceCapturesQuery,
      response: { 200: s.dataSourceCaptureListSchema, ...remote },
    },
    handler: async (req) => {
      const page = await svc.listDataSourceCaptures(
        ctx(req),
        scopeOf(req),
        req.params.data_source,
        req.query,
      );
      return { captures: page.items, ...pageMeta(page) };
    },
  });

  app.delete(`${dataSourceCaptures}/:capture`, {
    config: access.org('data_sources.write'),
    schema: {
      tags: ['Data sources'],
      summary:
        'Drop an orphan capture from the data source (its replication slot and publication); 409 while a deployed step owns it',
      operationId: 'deleteDataSourceCapture',
      params: s.dataSourceCaptureParams,
      response: { ...noContent, ...remote },
    },
    handler: async (req, reply) => {
      await svc.dropDataSourceCapture(ctx(req), scopeOf(req), req.params.data_source, req.params.capture);
      return reply.status(204).send(null);
    },
  });
}
