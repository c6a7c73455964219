import type { Deps } from '../../context';
import { access } from '../../http/access';
import { scopeOf } from '../../http/auth';
import { orgParams, withVerb } from '../../http/fields';
import { errorResponses } from '../../http/openapi';
import type { TypedApp } from '../../http/typed-app';
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
}
