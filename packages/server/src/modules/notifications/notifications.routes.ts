import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams, withVerb } from '../../http/fields';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
import * as as from '../alerts/attempts.schemas';
import * as asvc from '../alerts/attempts.service';
import * as s from './notifications.schemas';
import * as svc from './notifications.service';

export function notificationsRoutes(app: TypedApp, deps: Deps) {
  const ctx = (req: { id: string }) => ({ deps, requestId: req.id });
  const tags = ['Notifications'];
  const base = '/organizations/:organization/notifications';

  app.get(base, {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: 'List notifications, most recently seen first',
      params: orgParams,
      querystring: s.listNotificationsQuery,
      response: { 200: s.notificationListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await svc.listNotifications(ctx(req), scopeOf(req), req.query);
      return {
        notifications: page.items,
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.prev_cursor,
      };
    },
  });

  app.get(`${base}/:notification_slug`, {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: 'Get a notification',
      params: s.notificationParams,
      response: { 200: s.notificationSchema, ...errorResponses },
    },
    handler: async (req) => svc.getNotification(ctx(req), scopeOf(req), req.params.notification_slug),
  });

  for (const action of ['acknowledge', 'resolve'] as const) {
    app.post(`${base}/${withVerb('notification_slug', action)}`, {
      config: access.org('notifications.manage'),
      schema: {
        tags,
        summary:
          action === 'acknowledge'
            ? 'Acknowledge a notification: no more mail for this episode'
            : 'Resolve a notification; a later occurrence reopens it',
        params: s.notificationParams,
        response: { 200: s.notificationSchema, ...errorResponses },
      },
      handler: async (req) =>
        svc.transitionNotification(ctx(req), scopeOf(req), req.params.notification_slug, action),
    });
  }

  app.get(`${base}/:notification_slug/delivery-attempts`, {
    config: access.org('alerts.read'),
    schema: {
      tags,
      summary: 'List the delivery attempts of a notification, one per try',
      params: s.notificationParams,
      querystring: as.listAttemptsQuery,
      response: { 200: as.attemptListSchema, ...errorResponses },
    },
    handler: async (req) => {
      const page = await asvc.listNotificationAttempts(
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
      querystring: as.bulkAttemptsQuery,
      response: { 200: as.bulkAttemptListSchema, ...errorResponses },
    },
    handler: async (req) =>
      asvc.bulkAttempts(
        ctx(req),
        scopeOf(req),
        req.query.notification_slugs,
        req.query.limit_per_notification,
      ),
  });
}
