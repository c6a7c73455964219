import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { dataSourceParams } from '../data-sources/index';
import { pipelineParams } from '../pipelines/index';
import * as s from './drift.schemas';
import * as svc from './drift.service';

const listOut = <T>(page: {
  items: T[];
  has_more: boolean;
  next_cursor: string | null;
  prev_cursor: string | null;
}) => ({
  reports: page.items,
  has_more: page.has_more,
  next_cursor: page.next_cursor,
  prev_cursor: page.prev_cursor,
});

export function driftRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Drift reports'];
  const project = '/organizations/:organization/projects/:project';

  app.get('/organizations/:organization/data-sources/:data_source/drift-reports', {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary: 'List the drift reports of a data source (newest first)',
      params: dataSourceParams,
      querystring: s.listReportsQuery,
      response: { 200: s.reportListSchema, ...errorResponses },
    },
    handler: async (req) =>
      listOut(await svc.listDataSourceReports(ctx(req), scopeOf(req), req.params.data_source, req.query)),
  });

  app.get(`${project}/drift-reports`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List the drift reports of a project (newest first)',
      params: s.projectReportParams,
      querystring: s.listReportsQuery,
      response: { 200: s.reportListSchema, ...errorResponses },
    },
    handler: async (req) =>
      listOut(await svc.listProjectReports(ctx(req), scopeOf(req), req.params.project, req.query)),
  });

  app.get(`${project}/drift-reports/:report_slug`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Get a drift report',
      params: s.reportParams,
      response: { 200: s.reportSchema, ...errorResponses },
    },
    handler: async (req) =>
      svc.getProjectReport(ctx(req), scopeOf(req), req.params.project, req.params.report_slug),
  });

  app.post(`${project}/pipelines/:pipeline/drift-preview`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Preview the drift report of a candidate schema or a draft spec (nothing is stored)',
      params: pipelineParams,
      body: s.previewBody,
      response: { 200: s.previewSchema, ...errorResponses },
    },
    handler: async (req) =>
      svc.previewDrift(ctx(req), scopeOf(req), req.params.project, req.params.pipeline, req.body),
  });
}
