import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { projectParams } from '../projects/index';
import * as s from './contracts.schemas';
import * as svc from './contracts.service';

const page = <K extends string, T>(
  key: K,
  p: { items: T[]; has_more: boolean; next_cursor: string | null; prev_cursor: string | null },
) =>
  ({ [key]: p.items, has_more: p.has_more, next_cursor: p.next_cursor, prev_cursor: p.prev_cursor }) as {
    [P in K]: T[];
  } & { has_more: boolean; next_cursor: string | null; prev_cursor: string | null };

export function contractsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Contracts'];
  const base = '/organizations/:organization/projects/:project/contracts';
  const item = `${base}/:contract_slug`;

  app.get(base, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List the data contracts of a project',
      params: projectParams,
      querystring: s.listContractsQuery,
      response: { 200: s.contractListSchema, ...errorResponses },
    },
    handler: async (req) =>
      page('contracts', await svc.listContracts(ctx(req), scopeOf(req), req.params.project, req.query)),
  });

  app.post(base, {
    config: access.org('pipelines.write'),
    schema: {
      tags,
      summary: 'Create a data contract on a pipeline sink',
      params: projectParams,
      body: s.createContractBody,
      response: { 201: s.contractSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply.status(201).send(await svc.createContract(ctx(req), scopeOf(req), req.params.project, req.body)),
  });

  app.get(item, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Get a data contract',
      params: s.contractParams,
      response: { 200: s.contractSchema, ...errorResponses },
    },
    handler: async (req) =>
      svc.getContract(ctx(req), scopeOf(req), req.params.project, req.params.contract_slug),
  });

  app.get(`${item}/revisions`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'List the revisions of a data contract',
      params: s.contractParams,
      querystring: s.listRevisionsQuery,
      response: { 200: s.revisionListSchema, ...errorResponses },
    },
    handler: async (req) =>
      page(
        'revisions',
        await svc.listRevisions(
          ctx(req),
          scopeOf(req),
          req.params.project,
          req.params.contract_slug,
          req.query,
        ),
      ),
  });

  app.post(`${item}/revisions`, {
    config: access.org('pipelines.write'),
    schema: {
      tags,
      summary: 'Create an immutable revision (409 when a backward revision breaks the one it is based on)',
      params: s.contractParams,
      body: s.createRevisionBody,
      response: { 201: s.revisionSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply
        .status(201)
        .send(
          await svc.createRevision(
            ctx(req),
            scopeOf(req),
            req.params.project,
            req.params.contract_slug,
            req.body,
          ),
        ),
  });

  app.get(`${item}/revisions/:revision_slug`, {
    config: access.org('pipelines.read'),
    schema: {
      tags,
      summary: 'Get a revision; ?format=odcs answers the Open Data Contract Standard v3.1.0 form',
      params: s.revisionParams,
      querystring: s.revisionQuery,
      response: { 200: s.revisionSchema.or(s.odcsSchema), ...errorResponses },
    },
    handler: async (req) =>
      svc.getRevision(
        ctx(req),
        scopeOf(req),
        req.params.project,
        req.params.contract_slug,
        req.params.revision_slug,
        req.query.format,
      ),
  });
}
