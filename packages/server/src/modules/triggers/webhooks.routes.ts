import type { Deps } from '../../context';
import { access } from '../../http/access';
import { errorResponses, errorSchema } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as s from './webhooks.schemas';
import { receiveDelivery } from './webhooks.service';

// The public, signed delivery route. Its body is read as raw bytes (the signature covers them
// exactly), in a plugin of its own so the JSON parser of every other route stays as it is.

export function webhooksRoutes(app: TypedApp, deps: Deps) {
  app.register(async (inner: TypedApp) => {
    inner.removeAllContentTypeParsers();
    inner.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    inner.post('/webhooks/pipeline-triggers/:pipeline_trigger_slug/deliveries/:delivery_id', {
      config: access.public(),
      schema: {
        tags: ['Triggers'],
        summary:
          'Deliver to a webhook trigger (public; Standard Webhooks signature). 202 new run, 200 same delivery again, 409 same id other body, 401 not verified, 413 over 256 KiB, 422 body or mapping unusable',
        description:
          'Headers: `webhook-id` (equal to delivery_id), `webhook-timestamp` (Unix seconds, within 300 s), `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` keyed by the secret after `whsec_`). Body: a JSON object of at most 256 KiB.',
        security: [],
        params: s.deliveryParams,
        response: {
          200: s.deliveryAcceptedSchema,
          202: s.deliveryAcceptedSchema,
          ...errorResponses,
          413: errorSchema,
          422: errorSchema,
        },
      },
      handler: async (req, reply) => {
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const r = await receiveDelivery(deps, {
          slug: req.params.pipeline_trigger_slug,
          deliveryId: req.params.delivery_id,
          headers: req.headers,
          body,
          ip: req.ip,
          userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
          requestId: req.id,
        });
        if (r.status === 200) reply.header('idempotent-replayed', 'true');
        return reply.status(r.status).send(r.body);
      },
    });
  });
}
