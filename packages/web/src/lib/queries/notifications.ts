import { queryOptions } from '@tanstack/react-query';
import { client, type Ok, type QueryOf, unwrap } from '../api';

export type Notification = Ok<'getNotifications'>;
export type Attempt = Ok<'listAlertDeliveryAttempts'>['alert_delivery_attempts'][number];
export type NotificationFilter = Record<string, string | undefined>;

export const notificationKeys = {
  all: (org: string) => ['notifications', org] as const,
  list: (org: string, f: NotificationFilter) => [...notificationKeys.all(org), 'list', f] as const,
  one: (org: string, slug: string) => [...notificationKeys.all(org), 'one', slug] as const,
  attempts: (org: string, slug: string) => [...notificationKeys.all(org), 'attempts', slug] as const,
  deliveryAttempts: (org: string, slugs: string[], per: string | undefined) =>
    ['alert-delivery-attempts', org, slugs, per] as const,
};

export const notificationsQuery = (org: string, f: NotificationFilter) =>
  queryOptions({
    queryKey: notificationKeys.list(org, f),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/notifications', {
          params: { path: { organization: org }, query: { limit: 50, ...f } as QueryOf<'listNotifications'> },
        }),
      ),
  });

const onePath = (org: string, notification_slug: string) => ({
  params: { path: { organization: org, notification_slug } },
});

export const notificationQuery = (org: string, slug: string) =>
  queryOptions({
    queryKey: notificationKeys.one(org, slug),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/notifications/{notification_slug}', onePath(org, slug)),
      ),
  });

export const notificationAttemptsQuery = (org: string, slug: string) =>
  queryOptions({
    queryKey: notificationKeys.attempts(org, slug),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/notifications/{notification_slug}/delivery-attempts', {
          params: { ...onePath(org, slug).params, query: { limit: 100 } },
        }),
      ),
  });

/** The latest delivery attempts of the given notifications (the attempts screen). */
export const deliveryAttemptsQuery = (org: string, slugs: string[], per: string | undefined) =>
  queryOptions({
    queryKey: notificationKeys.deliveryAttempts(org, slugs, per),
    enabled: slugs.length > 0,
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/alert-delivery-attempts', {
          params: {
            path: { organization: org },
            query: {
              notification_slugs: slugs.join(','),
              limit_per_notification: Number(per ?? '5'),
            } as QueryOf<'listAlertDeliveryAttempts'>,
          },
        }),
      ),
  });

export const actOnNotification = (org: string, slug: string, action: 'acknowledge' | 'resolve') =>
  unwrap(
    action === 'acknowledge'
      ? client.POST(
          '/organizations/{organization}/notifications/{notification_slug}:acknowledge',
          onePath(org, slug),
        )
      : client.POST(
          '/organizations/{organization}/notifications/{notification_slug}:resolve',
          onePath(org, slug),
        ),
  );
