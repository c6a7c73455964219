import { queryOptions } from '@tanstack/react-query';
import { client, type QueryOf, unwrap } from '../api';

export type EventKind = 'events' | 'audit';
type Filter = Record<string, string | undefined>;

export const eventKeys = {
  list: (org: string, kind: EventKind, f: Filter) => ['events', org, kind, f] as const,
};

/** The organization's event log, or its security audit log, filtered and paged by the server. */
export const eventsQuery = (org: string, kind: EventKind, f: Filter) =>
  queryOptions({
    queryKey: eventKeys.list(org, kind, f),
    queryFn: () => {
      const params = { path: { organization: org }, query: { limit: 50, ...f } as QueryOf<'listEvents'> };
      return unwrap(
        kind === 'events'
          ? client.GET('/organizations/{organization}/events', { params })
          : client.GET('/organizations/{organization}/security-audit-events', { params }),
      );
    },
  });
