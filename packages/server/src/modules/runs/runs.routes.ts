import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { withVerb } from '../../http/fields';
import { errorResponses, noContent } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as checkpoints from './checkpoints.service';
import { executePipeline } from './run-execute.service';
import * as s from './runs.schemas';
import * as svc from './runs.service';

const pe = '/organizations/:organization/projects/:project/environments/:environment';

const pageMeta = (p: { has_more: boolean; next_cursor: string | null; prev_cursor: string | null }) => ({
  has_more: p.has_more,
  next_cursor: p.next_cursor,
  prev_cursor: p.prev_cursor,
});

export function runsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Runs'];

  app.post(`${pe}/pipelines/${withVerb('pipeline', 'execute')}`, {
    config: access.org('pipelines.execute'),
    schema: {
      tags,
      summary:
        'Execute the deployed pipeline: 202 with the queued run (200 with the existing run for a repeated run_slug)',
      params: s.pipelineParams,
      body: s.executeBody,
      response: { 200: s.runSchema, 202: s.runSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const r = await executePipeline(ctx(req), scopeOf(req), req.params, req.body ?? {});
      return reply.status(r.created ? 202 : 200).send(r.run);
    },
  });

  app.get(`${pe}/runs`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List runs of the environment',
      params: s.envParams,
      querystring: s.listRunsQuery,
      response: { 200: s.runListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const p = await svc.listRuns(ctx(req), scopeOf(req), req.params, req.query);
      return { runs: p.items, ...pageMeta(p) };
    },
  });

  app.get(`${pe}/runs/:run_slug`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Get a run (poll until succeeded, failed or canceled)',
      params: s.runParams,
      response: { 200: s.runSchema, ...errorResponses },
    },
    handler: async (req) => svc.getRun(ctx(req), scopeOf(req), req.params, req.params.run_slug),
  });

  app.post(`${pe}/runs/${withVerb('run_slug', 'cancel')}`, {
    config: access.org('pipelines.execute'),
    schema: {
      tags,
      summary:
        'Cancel a run: a queued run is canceled at once (200); a running one becomes canceling (202) and its worker stops it',
      params: s.runParams,
      response: { 200: s.runSchema, 202: s.runSchema, ...errorResponses },
    },
    handler: async (req, reply) => {
      const run = await svc.cancelRun(ctx(req), scopeOf(req), req.params, req.params.run_slug);
      return reply.status(run.state === 'canceling' ? 202 : 200).send(run);
    },
  });

  app.get(`${pe}/runs/:run_slug/logs`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Log lines of a run, oldest first (secrets and input values masked)',
      params: s.runParams,
      querystring: s.listLogsQuery,
      response: { 200: s.runLogListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const p = await svc.listLogs(ctx(req), scopeOf(req), req.params, req.params.run_slug, req.query);
      return { logs: p.items, ...pageMeta(p) };
    },
  });

  app.get(`${pe}/pipelines/:pipeline/checkpoints`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Incremental cursors of the pipeline in the environment',
      params: s.pipelineParams,
      response: { 200: s.checkpointListSchema, ...errorResponses },
    },
    handler: async (req) => checkpoints.getCheckpoints(ctx(req), scopeOf(req), req.params),
  });

  app.delete(`${pe}/pipelines/:pipeline/checkpoints`, {
    config: access.org('pipelines.write'),
    schema: {
      tags,
      summary: 'Reset every cursor of the pipeline in the environment (the next run reads from the start)',
      params: s.pipelineParams,
      querystring: s.resetCheckpointsQuery,
      response: { ...noContent, ...errorResponses },
    },
    handler: async (req, reply) => {
      await checkpoints.resetCheckpoints(
        ctx(req),
        scopeOf(req),
        req.params,
        req.query.protected_environment_confirmation ?? null,
      );
      return reply.status(204).send(null);
    },
  });
}
