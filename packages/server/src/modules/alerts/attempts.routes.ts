import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams } from '../../http/fields';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import { notificationParams } from '../notifications/index';
import * as s from './attempts.schemas';
import * as svc from './attempts.service';

// The delivery attempts of notifications, registered right after the notification routes (the
// same tag) so the API document keeps its order.
export function attemptsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Notifications'];
  const base = '/organizations/:organization/notifications';

  app.get(`${base}/:notification_slug/delivery-attempts`, {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: 'List the delivery attempts of a notification, one per try',
      params: notificationParams,
      querystring: s.listAttemptsQuery,
      response: { 200: s.attemptListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listNotificationAttempts(
        ctx(req),
        scopeOf(req),
        req.params.notification_slug,
        req.query,
      );
      return {
        alert_delivery_attempts: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.get('/organizations/:organization/alert-delivery-attempts', {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: 'Recent delivery attempts of up to 50 notifications (bounded diagnostics read)',
      params: orgParams,
      querystring: s.bulkAttemptsQuery,
      response: { 200: s.bulkAttemptListSchema, ...errorResponses },
    },
    handler: async (req) =>
      svc.bulkAttempts(
        ctx(req),
        scopeOf(req),
        req.query.notification_slugs,
        req.query.limit_per_notification,
      ),
  });
}
