import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { errorResponses, errorResponsesFor } from '../../http/openapi';
import { onePage } from '../../http/pagination';
import type { TypedApp } from '../../http/typed-app';
import * as s from './proof.schemas';
import { listPublicKeys } from './proof-keys';
import * as observations from './proof-observations.service';
import * as receipts from './proof-receipts.service';
import * as settings from './proof-settings.service';

export function proofRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Proof'];
  const ds = '/organizations/:organization/data-sources/:data_source';
  const page = <K extends string, T>(
    key: K,
    p: { items: T[]; has_more: boolean; next_cursor: string | null; prev_cursor: string | null },
  ) =>
    ({
      [key]: p.items,
      has_more: p.has_more,
      next_cursor: p.next_cursor,
      prev_cursor: p.prev_cursor,
    }) as Record<K, T[]> & {
      has_more: boolean;
      next_cursor: string | null;
      prev_cursor: string | null;
    };

  app.get(`${ds}/proof-settings`, {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary:
        'Proof settings of a git, github or gitlab data source (the defaults before the first PUT; 404 for other kinds)',
      params: s.dsParams,
      response: { 200: s.settingsSchema, ...errorResponses },
    },
    handler: async (req) => settings.getSettings(ctx(req), scopeOf(req), req.params.data_source),
  });

  app.put(`${ds}/proof-settings`, {
    config: access.org('data_sources.write'),
    schema: {
      tags,
      summary: 'Set proof settings; enabling checks expected_repository_id against the live repository',
      description:
        '201 when created, 200 when replaced; 409 REPOSITORY_MISMATCH when the live repository has another id; 502 REMOTE_FAILED when the repository cannot be reached or refuses (detailed_error holds the connector code); 422 PRIVATE_HOST_BLOCKED when its host is not allowed.',
      params: s.dsParams,
      body: s.putSettingsBody,
      response: {
        200: s.settingsSchema,
        201: s.settingsSchema,
        ...errorResponses,
        ...errorResponsesFor('PRIVATE_HOST_BLOCKED', 'REMOTE_FAILED'),
      },
    },
    handler: async (req, reply) => {
      const out = await settings.putSettings(ctx(req), scopeOf(req), req.params.data_source, req.body);
      return reply.status(out.created ? 201 : 200).send(out.settings);
    },
  });

  app.post(`${ds}/proof-observations`, {
    config: access.org('data_sources.test'),
    schema: {
      tags,
      summary: 'Observe every proof target at one commit (asynchronous: 202 with the running observation)',
      params: s.dsParams,
      body: s.observeBody,
      response: { 202: s.observationSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply
        .status(202)
        .send(
          await observations.requestObservation(ctx(req), scopeOf(req), req.params.data_source, req.body),
        ),
  });

  app.get(`${ds}/proof-observations`, {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary: 'List proof observations, newest first',
      params: s.dsParams,
      querystring: s.listObservationsQuery,
      response: { 200: s.observationListSchema, ...errorResponses },
    },
    handler: async (req) =>
      page(
        'observations',
        await observations.listObservations(ctx(req), scopeOf(req), req.params.data_source, req.query),
      ),
  });

  app.get(`${ds}/proof-observations/:observation_slug`, {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary: 'Get a proof observation',
      params: s.observationParams,
      response: { 200: s.observationSchema, ...errorResponses },
    },
    handler: async (req) =>
      observations.getObservation(
        ctx(req),
        scopeOf(req),
        req.params.data_source,
        req.params.observation_slug,
      ),
  });

  app.post(`${ds}/proof-receipts::compile`, {
    config: access.org('data_sources.test'),
    schema: {
      tags,
      summary: 'Compile a signed receipt from one observation, or two (base then head)',
      description: '409 PROOF_NOT_COMPILABLE with the reason when the observations do not qualify.',
      params: s.dsParams,
      body: s.compileBody,
      response: { 201: s.receiptSchema, ...errorResponses },
    },
    handler: async (req, reply) =>
      reply
        .status(201)
        .send(await receipts.compileReceipt(ctx(req), scopeOf(req), req.params.data_source, req.body)),
  });

  app.get(`${ds}/proof-receipts`, {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary: 'List proof receipts, newest first',
      params: s.dsParams,
      querystring: s.listReceiptsQuery,
      response: { 200: s.receiptListSchema, ...errorResponses },
    },
    handler: async (req) =>
      page(
        'receipts',
        await receipts.listReceipts(ctx(req), scopeOf(req), req.params.data_source, req.query),
      ),
  });

  app.get(`${ds}/proof-receipts/:receipt_slug`, {
    config: access.org('data_sources.read'),
    schema: {
      tags,
      summary: 'Get a proof receipt',
      params: s.receiptParams,
      response: { 200: s.receiptSchema, ...errorResponses },
    },
    handler: async (req) =>
      receipts.getReceipt(ctx(req), scopeOf(req), req.params.data_source, req.params.receipt_slug),
  });

  app.get('/proof-keys', {
    config: access.public(),
    schema: {
      tags,
      summary: "The deployment's public keys for verifying receipts offline (public)",
      response: { 200: s.keyListSchema, ...errorResponses },
    },
    // Every key in one page: a deployment has a handful.
    handler: async () => ({ keys: await listPublicKeys(deps.db), ...onePage }),
  });
}
