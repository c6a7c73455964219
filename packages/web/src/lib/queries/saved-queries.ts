import { queryOptions } from '@tanstack/react-query';
import { type BodyOf, client, type Ok, unwrap } from '../api';

export type SavedQuery = Ok<'getQueries'>;
export type Execution = Ok<'getQueryExecutions'>;

export const savedQueryKeys = {
  all: (org: string) => ['saved-queries', org] as const,
  executions: (org: string, query: string | undefined) =>
    [...savedQueryKeys.all(org), 'executions', query] as const,
};

export const savedQueriesQuery = (org: string) =>
  queryOptions({
    queryKey: savedQueryKeys.all(org),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/queries', {
          params: { path: { organization: org }, query: { limit: 100 } },
        }),
      ),
  });

export const executionsQuery = (org: string, query: string | undefined) =>
  queryOptions({
    queryKey: savedQueryKeys.executions(org, query),
    enabled: Boolean(query),
    queryFn: () =>
      unwrap(
        client.GET('/organizations/{organization}/queries/{query_slug}/executions', {
          params: { path: { organization: org, query_slug: query ?? '' }, query: { limit: 20 } },
        }),
      ),
  });

export const saveQuery = (org: string, existing: string | null, body: BodyOf<'createQueries'>) =>
  unwrap(
    existing
      ? client.PATCH('/organizations/{organization}/queries/{query_slug}', {
          params: { path: { organization: org, query_slug: existing } },
          body,
        })
      : client.POST('/organizations/{organization}/queries', {
          params: { path: { organization: org } },
          body,
        }),
  );

export const executeQuery = (org: string, query_slug: string) =>
  unwrap(
    client.POST('/organizations/{organization}/queries/{query_slug}:execute', {
      params: { path: { organization: org, query_slug } },
      body: { parameters: {} },
    }),
  );
